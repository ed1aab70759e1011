// The TextMate grammar, as VS Code runs it (vscode-textmate over the Oniguruma regex engine):
// every bundled ruleset, content, scenario and deck file tokenizes with its blocks and strings
// closed and nothing marked invalid, and chosen lines get the scopes a reader expects.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const HERE = path.join(__dirname, '..');
const REPO = path.join(HERE, '..', '..');
const GRAMMAR = path.join(HERE, 'syntaxes', 'rulecraft.tmLanguage.json');
const FOLDERS = ['rulesets', 'content', 'scenarios', 'decks'];
const EXTENSIONS = ['.rules', '.cards', '.scenario', '.deck'];

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources) => new oniguruma.OnigScanner(sources),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) =>
      scopeName === 'source.rulecraft'
        ? vsctm.parseRawGrammar(fs.readFileSync(GRAMMAR, 'utf8'), GRAMMAR)
        : null,
  });
  return registry.loadGrammar('source.rulecraft');
}

const grammarPromise = loadGrammar();

function bundledFiles() {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (EXTENSIONS.includes(path.extname(e.name))) out.push(p);
    }
  };
  for (const f of FOLDERS) {
    const d = path.join(REPO, f);
    if (fs.existsSync(d)) walk(d);
  }
  return out.sort();
}

// Every line's tokens ({text, scopes}) and the rule stack after the last line.
function tokenize(grammar, text) {
  let stack = vsctm.INITIAL;
  const lines = [];
  for (const line of text.split(/\r?\n/)) {
    const r = grammar.tokenizeLine(line, stack);
    lines.push(
      r.tokens.map((t) => ({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes })),
    );
    stack = r.ruleStack;
  }
  return { lines, stack };
}

// The scopes of the first token on the first line containing `line` whose text is `token`.
async function scopesOf(file, line, token) {
  const grammar = await grammarPromise;
  const text = fs.readFileSync(path.join(REPO, file), 'utf8');
  const { lines } = tokenize(grammar, text);
  const i = text.split(/\r?\n/).findIndex((l) => l.includes(line));
  assert.ok(i >= 0, `${file}: no line with ${JSON.stringify(line)}`);
  const t = lines[i].find((t) => t.text === token);
  assert.ok(t, `${file}:${i + 1}: no token ${JSON.stringify(token)} in ${JSON.stringify(lines[i])}`);
  return t.scopes;
}

async function expectScope(file, line, token, scope) {
  const scopes = await scopesOf(file, line, token);
  assert.ok(
    scopes.some((s) => s === scope || s.split(' ').includes(scope)),
    `${file}: ${JSON.stringify(token)} in ${JSON.stringify(line)} has ${scopes.join(', ')}, expected ${scope}`,
  );
}

test('every bundled file tokenizes with its blocks and strings closed, nothing invalid', async () => {
  const grammar = await grammarPromise;
  const files = bundledFiles();
  assert.ok(files.length >= 20, `expected the bundled files, found ${files.length}`);
  let lineCount = 0;
  for (const f of files) {
    const text = fs.readFileSync(f, 'utf8');
    const { lines, stack } = tokenize(grammar, text);
    lineCount += lines.length;
    assert.strictEqual(stack.depth, 1, `${path.relative(REPO, f)}: a block or string is left open`);
    lines.forEach((tokens, i) => {
      for (const t of tokens) {
        assert.ok(
          !t.scopes.some((s) => s.startsWith('invalid')),
          `${path.relative(REPO, f)}:${i + 1}: ${JSON.stringify(t.text)} is marked invalid`,
        );
      }
    });
  }
  console.log(`# tokenized ${files.length} files, ${lineCount} lines`);
});

test('keywords', async () => {
  await expectScope('rulesets/classic.rules', 'ruleset "classic" {', 'ruleset', 'keyword.declaration.rulecraft');
  await expectScope('rulesets/classic.rules', 'characteristic power: number', 'characteristic', 'keyword.declaration.rulecraft');
  await expectScope('rulesets/classic.rules', 'characteristic power: number', 'power', 'entity.name.type.rulecraft');
  await expectScope('content/honor/personalities.cards', 'before gains_honor(_, _)', 'before', 'keyword.control.rulecraft');
  await expectScope('scenarios/timing/reduced-to-zero.scenario', 'expect Bob honor = 0', 'expect', 'keyword.other.step.rulecraft');
  await expectScope('rulesets/classic.rules', 'term creature: in play and types has creature', 'has', 'keyword.operator.word.rulecraft');
});

test('strings, and names declared by a string', async () => {
  await expectScope('scenarios/timing/reduced-to-zero.scenario', '"Honor Tax" for Alice', 'Honor Tax', 'string.quoted.double.rulecraft');
  await expectScope('content/classic/basic.cards', 'card "Mountain" {', '"Mountain"', 'entity.name.type.rulecraft');
  await expectScope('content/classic/basic.cards', 'card "Mountain" {', 'card', 'keyword.declaration.rulecraft');
});

test('comments', async () => {
  await expectScope('rulesets/classic.rules', '# tapped: changed only by occurrences.', ' tapped: changed only by occurrences.', 'comment.line.number-sign.rulecraft');
});

test('numbers', async () => {
  await expectScope('rulesets/classic.rules', 'player life: number = 20', '20', 'constant.numeric.integer.rulecraft');
  await expectScope('decks/bolt.deck', 'Lightning Bolt', '40', 'constant.numeric.integer.rulecraft');
});

test('rule citations, in comments', async () => {
  const scopes = await scopesOf('content/mtg/layer-examples.cards', '(CR 613.4a)', 'CR 613.4a');
  assert.ok(scopes.includes('comment.line.number-sign.rulecraft'), scopes.join(', '));
  assert.ok(scopes.includes('constant.other.reference.rule-citation.rulecraft'), scopes.join(', '));
});

test('events applied to arguments, and blocks', async () => {
  await expectScope('content/honor/personalities.cards', 'before gains_honor(_, _)', 'gains_honor', 'entity.name.function.rulecraft');
  // Inside a card's block: the line is in a block.
  await expectScope('content/honor/personalities.cards', 'before gains_honor(_, _)', 'gains_honor', 'meta.block.rulecraft');
  await expectScope('rulesets/classic.rules', 'ruleset "classic" {', '{', 'punctuation.section.block.begin.rulecraft');
});

test('escapes in strings, and a bad escape', async () => {
  const grammar = await grammarPromise;
  const { lines } = tokenize(grammar, 'static "has \\"{T}: Add {G}.\\" and \\q" {\n}');
  const esc = lines[0].find((t) => t.text === '\\"');
  assert.ok(esc && esc.scopes.includes('constant.character.escape.rulecraft'), JSON.stringify(lines[0]));
  const bad = lines[0].find((t) => t.text === '\\q');
  assert.ok(bad && bad.scopes.includes('invalid.illegal.escape.rulecraft'), JSON.stringify(lines[0]));
});

test('an unclosed block or string is seen as open', async () => {
  const grammar = await grammarPromise;
  assert.strictEqual(tokenize(grammar, 'card "X" {\n    power: 1\n}\n').stack.depth, 1);
  assert.ok(tokenize(grammar, 'card "X" {\n    power: 1\n').stack.depth > 1);
});

test('the extension contributes the language, its grammar and its configuration', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(HERE, 'package.json'), 'utf8'));
  const [lang] = pkg.contributes.languages;
  const [grammar] = pkg.contributes.grammars;
  assert.deepStrictEqual(lang.extensions.slice(0, 3), ['.rules', '.cards', '.scenario']);
  assert.strictEqual(grammar.language, lang.id);
  const raw = JSON.parse(fs.readFileSync(path.join(HERE, grammar.path), 'utf8'));
  assert.strictEqual(raw.scopeName, grammar.scopeName);
  const conf = JSON.parse(fs.readFileSync(path.join(HERE, lang.configuration), 'utf8'));
  assert.strictEqual(conf.comments.lineComment, '#');
  assert.ok(fs.existsSync(path.join(HERE, pkg.main)));
});
