// The VS Code client of the MCL language server: starts `mcl lsp` on stdio for MCPL
// (.mcpl, .mcl) and hardware-description (.hdl) files and passes the `mcl.*`
// settings to it at start and whenever they change.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function settings() {
  const c = vscode.workspace.getConfiguration("mcl");
  return {
    feedback: { enabled: c.get("feedback.enabled"), passes: c.get("feedback.passes") },
    values: c.get("values"),
    hwdPaths: c.get("hwdPaths"),
    debounceMs: c.get("debounceMs"),
  };
}

function activate(context) {
  const command = vscode.workspace.getConfiguration("mcl").get("server.command") || ["mcl", "lsp"];
  const serverOptions = {
    command: command[0],
    args: command.slice(1),
    transport: TransportKind.stdio,
  };
  const clientOptions = {
    documentSelector: [
      { scheme: "file", language: "mcpl" },
      { scheme: "file", language: "hdl" },
      { scheme: "untitled", language: "mcpl" },
    ],
    initializationOptions: { mcl: settings() },
    synchronize: {
      // The server reads hardware descriptions from disk: tell it when they change.
      fileEvents: vscode.workspace.createFileSystemWatcher("**/*.hdl"),
    },
  };
  client = new LanguageClient("mcl", "Many-Core Levels", serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("mcl") && client) {
        client.sendNotification("workspace/didChangeConfiguration", { settings: { mcl: settings() } });
      }
    })
  );
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
