"""The code action "compare with the previous version": offered on a kernel whose folder
holds other versions; its command shows (window/showMessage) and returns the feedback
diff of the step from the version it refines, of the text in the editor."""

from __future__ import annotations

import ast
import asyncio

import pytest
from lsprotocol import types as lsp

from mcl.lsp.actions import COMPARE_COMMAND
from tests.lsp.conftest import EXAMPLES, open_document, wait_diagnostics

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _range(text: str, needle: str) -> lsp.Range:
    line = next(i for i, ln in enumerate(text.splitlines()) if needle in ln)
    pos = lsp.Position(line, text.splitlines()[line].index(needle))
    return lsp.Range(pos, pos)


async def _compare(client, uri: str, text: str) -> tuple[str, list[str]]:
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), _range(text, "foreach"),
        lsp.CodeActionContext(diagnostics=[])))
    action = next(a for a in actions if a.title.startswith("Compare 'matmul' with the previous"))
    # lsprotocol's client reads any answer with a "command" field as a Command, so the
    # action's Command object arrives as the text of a dict in Command.command.
    command = action.command
    if isinstance(action, lsp.Command):
        command = ast.literal_eval(command) if isinstance(command, str) else command
        assert command["title"] == action.title
        command = lsp.Command(command["title"], command["command"],
                              arguments=command["arguments"])
    assert command.command == COMPARE_COMMAND and command.arguments == [uri]
    before = len(client.messages)
    result = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command.command, command.arguments))
    for _ in range(200):
        if len(client.messages) > before:
            break
        await asyncio.sleep(0.01)
    return result, [m.message for m in client.messages[before:]]


async def test_compare_with_the_previous_version_shows_the_feedback_diff(client):
    path = EXAMPLES / "matmul" / "gpu_v1.mcpl"
    text = path.read_text()
    uri = open_document(client, path)
    await wait_diagnostics(client, uri, 1)
    result, shown = await _compare(client, uri, text)
    assert result.startswith("**gpu_v1** refines **gpu** (level order")
    gone = result.split("Feedback that disappeared:")[1].split("Feedback that appeared:")[0]
    assert "local memory can be leveraged" in gone       # what prompted gpu_v1
    assert shown == [result]


async def test_compare_uses_the_unsaved_text(client):
    path = EXAMPLES / "matmul" / "gpu_v3.mcpl"
    text = (EXAMPLES / "matmul" / "gpu_v2.mcpl").read_text()   # gpu_v3 edited back to v2
    uri = open_document(client, path, text)
    await wait_diagnostics(client, uri, 1)
    result, _ = await _compare(client, uri, text)
    assert "**gpu_v3** refines **gpu_v2**" in result
    assert "The feedback is the same" in result
