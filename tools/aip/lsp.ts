/**
 * `aip lsp`: a Language Server over stdio (vscode-languageserver) in front of the agency
 * (docs/integrations.md "Use it from your editor"). `serveLsp` wires the parts, each in its file:
 * the open documents and workspace folders (lsp-documents.ts), the AIP calls (lsp-calls.ts, with the
 * buffer-only retry of lsp-roots.ts and the local fallback of lsp-fallback.ts), completion and inline
 * completion (lsp-complete.ts, with the checker's progress of lsp-progress.ts), symbols and hover
 * (lsp-symbols.ts), diagnostics (lsp-diagnose.ts) and code actions (lsp-code-actions.ts).
 */
import {
  CodeActionKind,
  DidChangeWorkspaceFoldersNotification,
  MessageType,
  ProposedFeatures,
  ShowMessageNotification,
  TextDocumentSyncKind,
  createConnection,
  type Connection,
  type InitializeResult,
} from "vscode-languageserver/node";
import { agencyForServer, type Agency } from "./agency.js";
import { EXIT, UsageError, parseArgs, type Command } from "./command.js";
import { AgencyCalls } from "./lsp-calls.js";
import { CodeActionsFeature } from "./lsp-code-actions.js";
import { CompletionFeature } from "./lsp-complete.js";
import { serveDiagnostics } from "./lsp-diagnose.js";
import { EditorWorkspace } from "./lsp-documents.js";
import { LocalFallback } from "./lsp-fallback.js";
import { BufferOnlyRoots } from "./lsp-roots.js";
import { SymbolsFeature } from "./lsp-symbols.js";
import { EXIT_CLEANUP_LIMIT_MS, guardExit } from "./server-exit.js";

export interface LspOptions {
  connection: Connection;
  agency: Agency;
  /** Told the client's workspace folders at initialize (an embedded agency allows them). */
  onFolders?: (paths: string[]) => void;
  /** Told the folders after each workspace/didChangeWorkspaceFolders. */
  onFoldersChanged?: (paths: string[]) => void;
}

/** What aip lsp answers to initialize: the features it serves. */
function initializeResult(): InitializeResult {
  return {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      completionProvider: { triggerCharacters: ["."] },
      inlineCompletionProvider: true,
      documentSymbolProvider: true,
      hoverProvider: true,
      workspaceSymbolProvider: true,
      workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
      codeActionProvider: {
        codeActionKinds: [CodeActionKind.QuickFix, CodeActionKind.Source],
        resolveProvider: true,
      },
    },
    serverInfo: { name: "aip lsp", version: "1.0.0" },
  };
}

/** Wire the language server's handlers to the agency. */
export function serveLsp({ connection, agency, onFolders, onFoldersChanged }: LspOptions): void {
  /** window/showMessage, a notification: the editor shows it and nothing waits for an answer. */
  const tell = (message: string, level: "warning" | "info" = "warning"): void =>
    void connection.sendNotification(ShowMessageNotification.type, {
      type: level === "info" ? MessageType.Info : MessageType.Warning,
      message,
    });
  const bufferOnly = new BufferOnlyRoots((message) => tell(message));
  const workspace = new EditorWorkspace(bufferOnly);
  const calls = new AgencyCalls(agency, bufferOnly, new LocalFallback(tell));
  calls.follow(workspace.documents);
  const completion = new CompletionFeature(connection, workspace, calls);
  const diagnosis = serveDiagnostics({
    connection,
    documents: workspace.documents,
    contextOf: (d) => workspace.contextOf(d),
    call: (uri, action, context, constraints, token) => calls.call(uri, action, context, constraints, token),
  });

  connection.onInitialize((params) => {
    onFolders?.(workspace.initialize(params));
    completion.configure(params.initializationOptions);
    return initializeResult();
  });

  connection.onInitialized(() => {
    // Registered after initialize, so that it replaces the library's own handler of the notification.
    connection.onNotification(DidChangeWorkspaceFoldersNotification.type, ({ event }) =>
      onFoldersChanged?.(workspace.changeFolders(event)),
    );
    connection.console.info(
      agency.embedded
        ? `aip lsp: no agency answered; started an embedded agency on ${agency.socket} (logs: ${agency.logFile})`
        : `aip lsp: using the agency on ${agency.socket}`,
    );
  });

  completion.listen();
  new SymbolsFeature(connection, workspace, calls).listen();
  new CodeActionsFeature(connection, workspace, calls, (params, token) => diagnosis.quickFixes(params, token)).listen();

  workspace.documents.listen(connection);
  connection.onShutdown(() => {
    completion.dispose();
    calls.close();
  });
}

export const lsp: Command = {
  usage: `Usage: aip lsp [--stdio] [--socket PATH] [--config FILE]

Speaks the Language Server Protocol on stdin/stdout. Requests go to the agency on
--socket (default: $AIP_SOCKET or ./run/aip.sock); when none answers there, an
embedded agency is started (from --config, default manifests/agency.json) and the
LSP log channel says so. See docs/integrations.md "Use it from your editor".`,
  async run(argv) {
    const { flags, positionals } = parseArgs(argv, ["socket", "config"], ["stdio"]);
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
    const connection = createConnection(ProposedFeatures.all, process.stdin, process.stdout);
    let foldersKnown: (paths: string[]) => void = () => undefined;
    const folders = new Promise<string[]>((resolve) => (foldersKnown = resolve));
    const agency = await agencyForServer("lsp", flags, folders);
    if (agency === undefined) return EXIT.aipError;
    // The library exits the process on "exit", on stdin's end and when the editor dies: stop the agency first.
    const guard = guardExit(() => agency.close(), EXIT_CLEANUP_LIMIT_MS);
    serveLsp({
      connection,
      agency,
      onFolders: foldersKnown,
      onFoldersChanged: (paths) =>
        void agency.setClientRoots?.(paths).then(
          (restarted) =>
            restarted &&
            connection.console.info(
              `aip lsp: the embedded agency now allows the workspace folders ${paths.join(", ")}`,
            ),
          (err: Error) => connection.console.error(`aip lsp: the embedded agency did not restart: ${err.message}`),
        ),
    });
    const closed = new Promise<void>((resolve) => {
      connection.onExit(resolve);
      process.stdin.once("end", resolve); // the editor went away without "exit"
    });
    connection.listen();
    await closed;
    await guard.cleanup();
    guard.restore();
    process.stdin.destroy();
    return EXIT.ok;
  },
};
