// Starts `rulecraft lsp` for rulecraft files: the loader's diagnostics as you type, a card's text
// on hover, go to definition. The grammar works without it; without the client library
// (`npm ci --omit=dev` in this folder) or the `rulecraft` command, only the grammar is used.
'use strict';

const vscode = require('vscode');

let client;

function activate(context) {
  let lc;
  try {
    lc = require('vscode-languageclient/node');
  } catch (e) {
    vscode.window.showWarningMessage(
      'rulecraft: run `npm ci --omit=dev` in the extension folder for diagnostics, hover and go to definition',
    );
    return;
  }
  const config = vscode.workspace.getConfiguration('rulecraft');
  const command = config.get('server.path') || 'rulecraft';
  const server = { command, args: ['lsp'] };
  client = new lc.LanguageClient(
    'rulecraft',
    'rulecraft',
    { run: server, debug: server },
    { documentSelector: [{ scheme: 'file', language: 'rulecraft' }] },
  );
  client.start().catch((e) =>
    vscode.window.showWarningMessage(`rulecraft: cannot start \`${command} lsp\`: ${e.message}`),
  );
  context.subscriptions.push({ dispose: () => client && client.stop() });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
