"""The MCP SDK's server over the Engine: tools, the status resource, subscriptions, both eras.

`xcindex serve` starts in `server_front`, which answers a session's first messages without
importing the SDK and hands the connection to the server built here (`serve_handed_over`)
at the first message it does not answer itself; in-process clients (`Client(server)`) use
`build_server` directly. Registration is thin: a tool call runs through
`server_tools.call_tool` (the same for both paths: validation, the Engine method,
rendering within the response budget, one structured `tool_call` log event), and every
failure becomes a tool result with `isError: true` and a message that names the problem; a
traceback never reaches the client (it goes to the log instead).

The index status is also a resource, `xcindex://status` (the server's own project) or
`xcindex://status?projectPath=…` / `?indexStorePath=…`, whose subscribers hear
`notifications/resources/updated` when the store changes (once per rebuild) or the
session's edited files change: through `resources/subscribe` on handshake-era
connections, through `subscriptions/listen` on 2026-07-28 ones.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from xcindex import __version__
from xcindex._log import get_logger
from xcindex.engine import Engine, StatusVersion
from xcindex.engine.declaration import ToolDecl
from xcindex.engine.registry import TOOLS
from xcindex.errors import XcindexError
from xcindex.project.candidates import projects_for
from xcindex.project.ledger import project_directory
from xcindex.server.calls import BUDGET, ToolResult, call_tool, called_location, input_schema
from xcindex.server.calls import INSTRUCTIONS as INSTRUCTIONS

log = get_logger(__name__)
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


def tool_listing(tool: ToolDecl[Any, Any]) -> types.Tool:
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=input_schema(tool.args),
        output_schema=tool.output_schema,
        annotations=types.ToolAnnotations(
            title=tool.title,
            read_only_hint=tool.read_only,
            idempotent_hint=tool.idempotent,
            open_world_hint=False,
        ),
    )


def sdk_result(result: ToolResult) -> types.CallToolResult:
    """A tool call's result as the SDK's model (the front end shapes the same result itself)."""
    content: list[types.ContentBlock] = [types.TextContent(text=result.text)]
    if result.is_error:
        return types.CallToolResult(content=content, is_error=True)
    return types.CallToolResult(content=content, structured_content=result.structured)


# --- the status resource ---------------------------------------------------------------

STATUS_URI = "xcindex://status"
STATUS_TEMPLATE = "xcindex://status{?projectPath,indexStorePath}"
_STATUS_QUERY_KEYS = ("projectPath", "indexStorePath")
MAX_LISTED_RESOURCES = 20


@dataclass(frozen=True)
class StatusTarget:
    """A status resource: its URI (as the client wrote it) and the location it names."""

    uri: str
    project_path: str | None
    index_store_path: str | None


def status_uri(project_path: str | None, index_store_path: str | None) -> str:
    key, value = ("indexStorePath", index_store_path) if index_store_path else ("projectPath", project_path)
    return f"{STATUS_URI}?{urllib.parse.urlencode({key: value}, quote_via=urllib.parse.quote, safe='/')}"


def default_project() -> str | None:
    """The project of the server's session (CLAUDE_PROJECT_DIR, else the working
    directory), found as the hooks find it; None when there is none."""
    _, projects = projects_for(Path(project_directory()))
    return str(projects[0].path) if projects else None


def parse_status_uri(uri: str) -> StatusTarget:
    """`xcindex://status` (the server's project) or `xcindex://status?projectPath=…` /
    `?indexStorePath=…` (percent-encoded absolute paths)."""
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme != "xcindex" or parts.netloc != "status" or parts.path not in ("", "/") or parts.fragment:
        raise XcindexError(
            f"Unknown resource '{uri}': xcindex offers {STATUS_URI}, {STATUS_URI}?projectPath=<absolute path> "
            f"and {STATUS_URI}?indexStorePath=<absolute path>."
        )
    query = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - set(_STATUS_QUERY_KEYS))
    if unknown:
        raise XcindexError(f"Unknown parameter '{unknown[0]}' in '{uri}': use projectPath or indexStorePath.")
    project = query.get("projectPath", [None])[-1]
    store = query.get("indexStorePath", [None])[-1]
    return StatusTarget(uri, project or None, store or None)


@dataclass
class _Watch:
    target: StatusTarget
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    sessions: set[ServerSession] = field(default_factory=set)
    listeners: int = 0


class StatusFeed:
    """Tells the subscribers of a status resource when it changes.

    One watch task per subscribed URI, shared by its subscribers: sessions that sent
    `resources/subscribe` (handshake-era protocol) and open `subscriptions/listen` streams
    (2026-07-28). A watch waits on `Engine.wait_status_change` (one change per rebuild,
    once the index has taken it in; at once for the session's edited files) and ends when
    its last subscriber leaves.
    """

    def __init__(self, engine: Engine, task_group: TaskGroup) -> None:
        self.engine = engine
        self.task_group = task_group
        self.bus = InMemorySubscriptionBus()
        self.listen_handler = ListenHandler(self.bus)
        self.known: dict[str, StatusTarget] = {}
        """Status resources of the locations tool calls have named, newest last (listed)."""
        self._watches: dict[str, _Watch] = {}

    async def resolve(self, uri: str) -> StatusTarget:
        target = parse_status_uri(uri)
        if target.project_path is None and target.index_store_path is None:
            project = await anyio.to_thread.run_sync(default_project)
            if project is None:
                raise XcindexError(
                    f"No Swift package or Xcode project in {project_directory()}: read "
                    f"{STATUS_URI}?projectPath=<absolute path> instead."
                )
            target = StatusTarget(uri, project, None)
        return target

    def remember(self, project_path: str | None, index_store_path: str | None) -> None:
        uri = status_uri(project_path, index_store_path)
        self.known.pop(uri, None)
        self.known[uri] = StatusTarget(uri, project_path, index_store_path)
        while len(self.known) > MAX_LISTED_RESOURCES:
            del self.known[next(iter(self.known))]

    async def subscribe(self, uri: str, session: ServerSession | None) -> None:
        """Start telling `session` (None: the listen streams) about changes of `uri`."""
        watch = self._watches.get(uri)
        if watch is None:
            target = await self.resolve(uri)
            since = await self.engine.status_version(
                project_path=target.project_path, index_store_path=target.index_store_path
            )
            watch = self._watches.setdefault(uri, _Watch(target))
            self.task_group.start_soon(self._watch, watch, since)
            log.info("status_watch_started", uri=uri)
        if session is None:
            watch.listeners += 1
        else:
            watch.sessions.add(session)

    def unsubscribe(self, uri: str, session: ServerSession | None) -> None:
        watch = self._watches.get(uri)
        if watch is None:
            return
        if session is None:
            watch.listeners = max(watch.listeners - 1, 0)
        else:
            watch.sessions.discard(session)
        if not watch.sessions and not watch.listeners:
            watch.scope.cancel()
            del self._watches[uri]
            log.info("status_watch_stopped", uri=uri)

    async def listen(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """Serve `subscriptions/listen`: watch the status URIs it names for as long as it lasts."""
        watched: list[str] = []
        try:
            for uri in params.notifications.resource_subscriptions or ():
                try:
                    await self.subscribe(uri, None)
                except XcindexError as error:
                    log.info("status_subscription_refused", uri=uri, error=str(error))
                    continue
                watched.append(uri)
            return await self.listen_handler(ctx, params)
        finally:
            for uri in watched:
                self.unsubscribe(uri, None)

    async def _watch(self, watch: _Watch, since: StatusVersion) -> None:
        target = watch.target
        with watch.scope:
            while True:
                try:
                    since = await self.engine.wait_status_change(
                        since, project_path=target.project_path, index_store_path=target.index_store_path
                    )
                except XcindexError as error:
                    # The store may be gone for a moment (a clean build): look again later.
                    log.info("status_watch_waiting", uri=target.uri, error=str(error))
                    await anyio.sleep(self.engine.config.watch_settle_s)
                    continue
                except Exception:
                    # A watch must never take the server down with it.
                    log.exception("status_watch_failed", uri=target.uri)
                    await anyio.sleep(self.engine.config.watch_settle_s)
                    continue
                await self._publish(watch)

    async def _publish(self, watch: _Watch) -> None:
        uri = watch.target.uri
        log.info("resource_updated", uri=uri, sessions=len(watch.sessions), listen_streams=watch.listeners)
        if watch.listeners:
            await self.bus.publish(ResourceUpdated(uri=uri))
        for session in list(watch.sessions):
            try:
                await session.send_resource_updated(uri)
            except Exception as error:
                log.info("resource_update_undelivered", uri=uri, error=repr(error))
                watch.sessions.discard(session)

    async def read(self, uri: str) -> types.ReadResourceResult:
        target = await self.resolve(uri)
        answer = await self.engine.status(
            project_path=target.project_path, index_store_path=target.index_store_path
        )
        text = json.dumps(answer.to_json(BUDGET), ensure_ascii=False)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )

    def resources(self) -> list[types.Resource]:
        described = "Index status (the status tool's answer as JSON); subscribe to hear when it changes."
        listed = [
            types.Resource(uri=STATUS_URI, name="status", description=described, mime_type="application/json")
        ]
        for target in reversed(self.known.values()):
            where = target.index_store_path or target.project_path or ""
            listed.append(
                types.Resource(
                    uri=target.uri,
                    name=f"status of {os.path.basename(where.rstrip('/'))}",
                    mime_type="application/json",
                )
            )
        return listed


def _invalid(error: XcindexError) -> MCPError:
    return MCPError(types.INVALID_PARAMS, str(error))


def build_server(engine: Engine, feed: StatusFeed | None = None) -> Server[Any]:
    """The MCP server over `engine`; with a `feed`, also the status resource."""

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool_listing(tool) for tool in TOOLS])

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        result = await call_tool(engine, params.name, params.arguments, ctx.session.report_progress)
        location = called_location(params.arguments, result)
        if feed is not None and location is not None:
            feed.remember(*location)
        return sdk_result(result)

    if feed is None:
        return Server(
            "xcindex",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
        )
    status_feed = feed

    async def on_list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=status_feed.resources())

    async def on_list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=STATUS_TEMPLATE,
                    name="status",
                    description="Index status of a project (absolute projectPath) or an index store "
                    "(indexStorePath), as JSON; subscribe to hear when it changes.",
                    mime_type="application/json",
                )
            ]
        )

    async def on_read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            return await status_feed.read(params.uri)
        except XcindexError as error:
            raise _invalid(error) from None

    async def on_subscribe_resource(
        ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        try:
            await status_feed.subscribe(params.uri, ctx.session)
        except XcindexError as error:
            raise _invalid(error) from None
        return types.EmptyResult()

    async def on_unsubscribe_resource(
        ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        status_feed.unsubscribe(params.uri, ctx.session)
        return types.EmptyResult()

    return Server(
        "xcindex",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_resource_templates,
        on_read_resource=on_read_resource,
        on_subscribe_resource=on_subscribe_resource,
        on_unsubscribe_resource=on_unsubscribe_resource,
        on_subscriptions_listen=status_feed.listen,
    )


async def serve_handed_over(
    engine: Engine,
    feed: StatusFeed,
    lines: MemoryObjectReceiveStream[str],
    write_line: Callable[[str], Awaitable[None]],
    replay: Sequence[str],
    replay_id: str,
    on_cancelled: Callable[[object], None],
    acknowledged: frozenset[object] = frozenset(),
) -> None:
    """Serve a connection the front end (`server_front`) hands over, until `lines` ends.

    Lines are read as the SDK's stdio transport reads them (`validate_json`; what it cannot
    read reaches the server as an exception, which it drops) and answers written as it
    writes them. `replay` comes first: the requests that set the connection's state before
    the handover; the answer to the one with id `replay_id` was already given by the front
    end, so it is dropped. `feed` already knows the locations of the front end's calls. Every `notifications/cancelled` read is also reported to
    `on_cancelled` (its request id), since it may be meant for a call the front end runs.
    The plugin's first-start front already acknowledged the listen streams in
    `acknowledged`: the SDK's second acknowledgement of each is dropped.
    """
    server = build_server(engine, feed)
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)

    def read(line: str) -> SessionMessage | Exception:
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except Exception as error:
            return error
        if isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            on_cancelled((message.params or {}).get("requestId"))
        return SessionMessage(message)

    async def read_all() -> None:
        async with read_send:
            for line in replay:
                await read_send.send(read(line))
            async with lines:
                async for line in lines:
                    await read_send.send(read(line))

    unacknowledged = set(acknowledged)

    async def write() -> None:
        replay_answered = False
        async with write_receive:
            async for item in write_receive:
                message = item.message
                if (
                    not replay_answered
                    and isinstance(message, types.JSONRPCResponse | types.JSONRPCError)
                    and message.id == replay_id
                ):
                    replay_answered = True
                    continue
                if (
                    isinstance(message, types.JSONRPCNotification)
                    and message.method == "notifications/subscriptions/acknowledged"
                    and (subscription := ((message.params or {}).get("_meta") or {}).get(SUBSCRIPTION_ID))
                    in unacknowledged
                ):
                    unacknowledged.discard(subscription)
                    continue
                await write_line(message.model_dump_json(by_alias=True, exclude_unset=True) + "\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_all)
        tg.start_soon(write)
        await server.run(read_receive, write_send, server.create_initialization_options())
