//! `rulecraft lsp`: a language server over standard input and output (the `lsp-server` crate,
//! as rust-analyzer uses). It publishes the loader's diagnostics for each open document as it
//! changes (full text sync), shows a card's text (or any defined name's) on hover, and goes from a
//! name to where it is defined.

mod check;
mod index;
mod text;

use index::Project;
use lsp_server::{Connection, ExtractError, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Notification as _, PublishDiagnostics,
};
use lsp_types::request::{GotoDefinition, HoverRequest, Request as _};
use lsp_types::{
    GotoDefinitionParams, GotoDefinitionResponse, Hover, HoverContents, HoverParams,
    HoverProviderCapability, InitializeParams, Location, MarkupContent, MarkupKind, OneOf,
    PublishDiagnosticsParams, ServerCapabilities, ServerInfo, TextDocumentSyncCapability,
    TextDocumentSyncKind, Uri,
};
use rulecraft_lang::loader::SearchDir;
use std::collections::HashMap;
use std::error::Error;
use std::path::PathBuf;

type Fallible<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// An open document.
struct Doc {
    path: PathBuf,
    text: String,
    version: i32,
}

/// The server's state: the open documents, by URI.
struct Server {
    docs: HashMap<String, (Uri, Doc)>,
    search: Vec<SearchDir>,
}

/// The lines of a definition shown on hover, at most.
const HOVER_LINES: usize = 60;

/// Serves one client on standard input and output until it asks the server to exit.
pub fn serve(search: Vec<SearchDir>) -> Fallible<()> {
    let (connection, io_threads) = Connection::stdio();
    let caps = ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        ..ServerCapabilities::default()
    };
    let init = serde_json::json!({
        "capabilities": caps,
        "serverInfo": ServerInfo { name: "rulecraft".into(), version: Some(env!("CARGO_PKG_VERSION").into()) },
    });
    let (id, params) = connection.initialize_start()?;
    let _: InitializeParams = serde_json::from_value(params)?;
    connection.initialize_finish(id, init)?;
    let mut server = Server {
        docs: HashMap::new(),
        search,
    };
    for msg in &connection.receiver {
        match msg {
            Message::Request(req) => {
                if connection.handle_shutdown(&req)? {
                    break;
                }
                let resp = server.request(req);
                connection.sender.send(Message::Response(resp))?;
            }
            Message::Notification(n) => {
                for out in server.notification(n)? {
                    connection.sender.send(Message::Notification(out))?;
                }
            }
            Message::Response(_) => {}
        }
    }
    drop(connection);
    io_threads.join()?;
    Ok(())
}

fn cast<R: lsp_types::request::Request>(
    req: Request,
) -> Result<(RequestId, R::Params), ExtractError<Request>> {
    req.extract(R::METHOD)
}

impl Server {
    fn open_texts(&self) -> HashMap<PathBuf, String> {
        self.docs
            .values()
            .map(|(_, d)| {
                let key = d.path.canonicalize().unwrap_or_else(|_| d.path.clone());
                (key, d.text.clone())
            })
            .collect()
    }

    fn request(&mut self, req: Request) -> Response {
        let id = req.id.clone();
        let result = match req.method.as_str() {
            HoverRequest::METHOD => match cast::<HoverRequest>(req) {
                Ok((_, p)) => serde_json::to_value(self.hover(&p)),
                Err(e) => return bad_params(id, e),
            },
            GotoDefinition::METHOD => match cast::<GotoDefinition>(req) {
                Ok((_, p)) => serde_json::to_value(self.definition(&p)),
                Err(e) => return bad_params(id, e),
            },
            other => {
                return Response::new_err(
                    id,
                    lsp_server::ErrorCode::MethodNotFound as i32,
                    format!("unknown request `{other}`"),
                )
            }
        };
        match result {
            Ok(v) => Response::new_ok(id, v),
            Err(e) => Response::new_err(
                id,
                lsp_server::ErrorCode::InternalError as i32,
                e.to_string(),
            ),
        }
    }

    fn notification(&mut self, n: Notification) -> Fallible<Vec<Notification>> {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let p: lsp_types::DidOpenTextDocumentParams = serde_json::from_value(n.params)?;
                let d = p.text_document;
                if let Some(path) = text::path_of(&d.uri) {
                    let doc = Doc {
                        path,
                        text: d.text,
                        version: d.version,
                    };
                    self.docs.insert(d.uri.as_str().to_string(), (d.uri, doc));
                }
            }
            DidChangeTextDocument::METHOD => {
                let p: lsp_types::DidChangeTextDocumentParams = serde_json::from_value(n.params)?;
                if let Some((_, doc)) = self.docs.get_mut(p.text_document.uri.as_str()) {
                    // Full sync: the last change is the whole text.
                    if let Some(c) = p.content_changes.into_iter().last() {
                        doc.text = c.text;
                        doc.version = p.text_document.version;
                    }
                }
            }
            DidSaveTextDocument::METHOD => {}
            DidCloseTextDocument::METHOD => {
                let p: lsp_types::DidCloseTextDocumentParams = serde_json::from_value(n.params)?;
                self.docs.remove(p.text_document.uri.as_str());
                // Its diagnostics go with it.
                return Ok(vec![publish(p.text_document.uri, Vec::new(), None)]);
            }
            _ => return Ok(Vec::new()),
        }
        // A change to one document may change another's diagnostics (a scenario naming the
        // ruleset being edited): every open document is checked again.
        let open = self.open_texts();
        Ok(self
            .docs
            .values()
            .map(|(uri, d)| {
                let diags = check::diagnostics(&d.path, &d.text, &open, &self.search);
                publish(uri.clone(), diags, Some(d.version))
            })
            .collect())
    }

    /// The document, the name under the position, and its project.
    fn lookup(&self, uri: &Uri, pos: lsp_types::Position) -> Option<(String, Project, PathBuf)> {
        let (_, doc) = self.docs.get(uri.as_str())?;
        let name = text::name_at(&doc.text, text::offset(&doc.text, pos))?;
        let project = Project::read(&doc.path, &doc.text, &self.open_texts(), &self.search);
        Some((name, project, doc.path.clone()))
    }

    fn hover(&self, p: &HoverParams) -> Option<Hover> {
        let tp = &p.text_document_position_params;
        let (name, project, _) = self.lookup(&tp.text_document.uri, tp.position)?;
        let def = *project.find(&name).first()?;
        let text = project.texts.get(&def.path)?;
        let body = &text[def.whole.0..def.whole.1];
        let mut lines: Vec<&str> = body.lines().collect();
        let more = lines.len() > HOVER_LINES;
        lines.truncate(HOVER_LINES);
        let (line, _) = {
            let pos = text::position(text, def.name_span.0);
            (pos.line + 1, pos.character)
        };
        let value = format!(
            "{} `{}` ({}:{line})\n\n```rulecraft\n{}{}\n```",
            def.kind,
            def.name,
            def.path.display(),
            lines.join("\n"),
            if more { "\n..." } else { "" }
        );
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value,
            }),
            range: None,
        })
    }

    fn definition(&self, p: &GotoDefinitionParams) -> Option<GotoDefinitionResponse> {
        let tp = &p.text_document_position_params;
        let (name, project, _) = self.lookup(&tp.text_document.uri, tp.position)?;
        let locations: Vec<Location> = project
            .find(&name)
            .into_iter()
            .filter_map(|d| {
                let text = project.texts.get(&d.path)?;
                Some(Location::new(
                    text::uri_of(&d.path)?,
                    text::range(text, d.name_span.0, d.name_span.1),
                ))
            })
            .collect();
        match locations.len() {
            0 => None,
            1 => locations
                .into_iter()
                .next()
                .map(GotoDefinitionResponse::Scalar),
            _ => Some(GotoDefinitionResponse::Array(locations)),
        }
    }
}

fn bad_params(id: RequestId, e: ExtractError<Request>) -> Response {
    Response::new_err(
        id,
        lsp_server::ErrorCode::InvalidParams as i32,
        format!("{e:?}"),
    )
}

fn publish(
    uri: Uri,
    diagnostics: Vec<lsp_types::Diagnostic>,
    version: Option<i32>,
) -> Notification {
    Notification::new(
        PublishDiagnostics::METHOD.to_string(),
        PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        },
    )
}
