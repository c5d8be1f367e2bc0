"""The JSON shapes of the tools' answers: what `to_json()` returns and what `outputSchema` says.

Typed dictionaries rather than models: mypy checks that every `to_json()` builds exactly
its shape (a renamed or forgotten key is a type error), the answers cost nothing extra at
run time, and pydantic turns the same declarations into each tool's `outputSchema`. The
tests validate real answers against those schemas, so the three cannot drift apart.
`typing_extensions.TypedDict` because pydantic needs it on Python 3.11.
"""

from __future__ import annotations

from typing import Annotated, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from xcindex.vocabulary import Completeness, Tier


def _one_of(*values: str) -> object:
    return Field(json_schema_extra={"enum": list(values)})


CompletenessText = Annotated[str, _one_of(*Completeness)]
TierText = Annotated[str, _one_of(*Tier)]
FileStateText = Annotated[str, _one_of("fresh", "stale", "not_indexed", "missing", "unknown")]
ReachedViaText = Annotated[str, _one_of("directCall", "dispatch", "libraryDispatch", "executableByName")]
"""How a test was reached from the change (docs/tools.md, "Reach"), surest first."""


class WarningJson(TypedDict):
    code: str
    message: str


class VerdictJson(TypedDict):
    """What every index answer says about how far it can be trusted."""

    completeness: CompletenessText
    staleFiles: list[str]
    staleFileCount: int
    sessionEditedFiles: list[str]
    overlayFiles: NotRequired[list[str]]
    """Files whose sites come from the freshness overlay (re-indexed since the last build);
    present when there are any."""
    warnings: list[WarningJson]


class SymbolJson(TypedDict):
    usr: str
    name: str
    kind: str
    language: str
    definitionPath: str | None
    """None for a symbol of the SDK the project uses (no source here)."""
    definitionLine: int | None


class CandidateJson(SymbolJson):
    container: str | None
    module: str | None
    signature: str | None
    matchedBy: str
    inherited: NotRequired[bool]
    inProject: NotRequired[bool]
    hint: NotRequired[str]


class FindSymbolJson(VerdictJson):
    results: list[CandidateJson]
    matchedBy: str
    resolvedUsr: str | None
    resolvedNote: NotRequired[str]
    totalCount: int
    truncated: bool
    nextOffset: NotRequired[int]


class ConformanceSiteJson(TypedDict):
    path: str
    line: int
    column: int
    conformingType: str | None


class OccurrenceJson(TypedDict):
    usr: str
    symbolName: str
    path: str
    line: int
    column: int
    roles: list[str]
    """Includes `implicit` for a property wrapper's initializer called at its attribute, and
    for a witness anchored at its conformance (an SDK member, no definition here)."""
    conformanceSites: NotRequired[list[ConformanceSiteJson]]
    """find_overrides: the conformances at which the index records the witness implicitly."""


class SymbolRefJson(TypedDict):
    usr: str
    name: str


class SitesJson(VerdictJson):
    results: list[OccurrenceJson]
    totalCount: int
    truncated: bool
    symbols: list[SymbolRefJson]
    nextOffset: NotRequired[int]
    note: NotRequired[str]


class DefinitionJson(VerdictJson):
    result: OccurrenceJson | None


class ConformanceJson(OccurrenceJson):
    conformingType: str
    conformingTypeKind: str
    viaExtension: bool
    viaProtocol: str | None
    inheritedFrom: str | None
    """Set for a subclass of a conforming class: the class that declares the conformance."""


class ConformancesJson(VerdictJson):
    results: list[ConformanceJson]
    totalCount: int
    truncated: bool
    nextOffset: NotRequired[int]


class TestFilterJson(TypedDict):
    path: str
    kind: str
    filter: str
    """An anchored `swift test --filter` pattern (a test, a whole class or suite, a module)."""
    id: str
    """What it selects as `swift test list` names it: `Module.Class/testMethod`,
    `Module.Suite/function()`, `Module.Class` (all its tests), `Module`."""
    tests: int
    """How many of the selected tests it runs."""
    reachedVia: list[ReachedViaText]
    """How its tests were reached, surest first."""


class SelectedTestJson(TypedDict):
    """A covering test: one test the change can reach, at the level the runner accepts."""

    usr: str
    name: str
    id: str
    """As `swift test list` prints it."""
    path: str
    line: int
    kind: str
    filter: str
    """The anchored pattern that runs exactly it."""
    reachedVia: ReachedViaText


class TestSelectionJson(TypedDict):
    """How a selection was made: tests per way they were reached, and the commands."""

    reachedVia: dict[str, int]
    """Tests per way they were reached (`directCall` the surest)."""
    likelyTestCommand: str | None
    """Runs the tests reached by a direct call only (None when that is all of them, or none)."""
    commandRunsMore: bool
    """`swiftTestCommand` names whole classes or modules some of whose tests are not
    selected (the exact list would be too long)."""
    executables: list[str]
    """Executables the change reaches, which the tests reached `executableByName` run."""


class BlastRadiusJson(VerdictJson):
    affectedFiles: list[str]
    directDependents: list[str]
    coveringTests: list[str]
    selectedTests: list[SelectedTestJson]
    testFilters: list[TestFilterJson]
    swiftTestCommand: str | None
    selection: TestSelectionJson
    transitiveDepth: int
    transitiveBounded: bool
    affectedFileCount: int
    directDependentCount: int
    coveringTestCount: int
    selectedTestCount: int
    truncated: bool
    coversWholeSuite: bool
    viaExecutables: list[str]


class IngestProgressJson(TypedDict):
    done: int
    total: int


class CountsJson(TypedDict):
    units: int
    liveUnits: int
    records: int
    symbols: int
    occurrences: int
    relations: int


class LastRefreshJson(TypedDict):
    durationMs: float
    unitsRead: int
    unitsUnchanged: int
    unitsDropped: int
    recordsRead: int
    recordsReused: int


class UnreadableJson(TypedDict):
    kind: str
    name: str
    message: str


class LspChildJson(TypedDict, total=False):
    root: str
    state: str
    pid: int | None
    ready: bool
    restarts: int
    crashes: int
    lastError: str | None
    lastErrorMessage: str | None
    indexing: list[str]
    retryAfterSeconds: float | None
    recentLog: list[str]


class StatusJson(TypedDict):
    indexStorePath: str
    indexMtime: str | None
    staleFileCount: int
    staleFiles: list[str]
    summary: str
    completeness: CompletenessText
    sessionEditedFiles: list[str]
    sessionEditedFileCount: int
    ingesting: bool
    ingestProgress: IngestProgressJson
    counts: CountsJson | None
    lastRefresh: LastRefreshJson | None
    unreadable: list[UnreadableJson]
    unreadableCount: int
    databasePath: str
    sourcekitLsp: list[LspChildJson]
    warnings: list[WarningJson]
    overlayFiles: NotRequired[list[str]]
    """Files edited since the last build, re-indexed on their own (the freshness overlay)."""
    newFiles: NotRequired[list[str]]
    """Swift files of the project's targets no unit describes yet."""


class FileFreshnessJson(TypedDict):
    path: str
    state: FileStateText
    sessionEdited: bool


class FreshWaitJson(TypedDict):
    fresh: bool
    timedOut: bool
    waitedMs: int
    files: list[FileFreshnessJson]
    fileCount: int
    truncated: bool
    warnings: NotRequired[list[WarningJson]]
    """Only when the freshness overlay could not re-index a named file that is still stale."""


class RefusalJson(TypedDict):
    reason: str
    message: str
    remediation: str


class RenameRangeJson(TypedDict):
    path: str
    line: int
    column: int
    endColumn: int
    tier: TierText
    reasons: list[str]
    module: str | None
    source: str


class IndexFreshnessJson(TypedDict):
    lastBuilt: str | None
    filesEditedThisSession: int


class RenameSummaryJson(TypedDict):
    green_verified: int
    green_indexstore: int
    yellow_disagreement: int
    yellow_lsp_only: int
    red_stale: int


class MentionJson(TypedDict):
    path: str
    line: int
    column: int
    endColumn: int
    text: str
    kind: NotRequired[str]
    """Absent for code; `local_conformance`, `comment`, `doc_link`, `string` or `available_renamed` otherwise."""


class RenamePlanJson(TypedDict):
    usr: str
    oldName: str | None
    newName: str
    generatedAt: str
    indexFreshness: IndexFreshnessJson
    ranges: list[RenameRangeJson]
    summary: RenameSummaryJson
    refusal: RefusalJson | None
    warnings: list[WarningJson]
    truncated: bool
    nextOffset: int | None
    unprovenSites: list[MentionJson]
    unprovenSiteCount: int
    unprovenNextOffset: int | None
    notVisibleSiteCount: int
    textMentions: list[MentionJson]
    textMentionCount: int
    textMentionNextOffset: int | None


# --- call_hierarchy, type_hierarchy, change_impact -----------------------------------------

DispatchText = Annotated[str, _one_of("static", "dynamic", "super")]
ChangeText = Annotated[str, _one_of("body", "signature", "added", "removed", "moved")]


class SymbolSiteJson(TypedDict):
    """A symbol and its definition site (null where the index has none: the SDK, the
    standard library)."""

    usr: str
    name: str
    kind: str
    container: str | None
    """The type (or the extended type) that declares it; null for a global."""
    path: str | None
    line: int | None
    column: int | None


class CallSiteJson(TypedDict):
    path: str
    line: int
    column: int
    dispatch: DispatchText
    resolvesTo: str
    """The usr the call names: the callee itself, or (dynamic) a base it overrides or witnesses."""


class CallJson(TypedDict):
    level: int
    caller: SymbolSiteJson
    callee: SymbolSiteJson
    sites: list[CallSiteJson]
    viaDispatch: bool
    """No site names the callee: dynamic dispatch reaches it through the base or requirement they name."""
    cycle: bool


class CallHierarchyJson(VerdictJson):
    root: SymbolSiteJson | None
    direction: str
    depth: int
    calls: list[CallJson]
    callCount: int
    """Level-1 groups (direct callers, or callees) in all, listed or not."""
    externalCallCount: int
    truncated: bool
    nextOffset: NotRequired[int]


class TypeLinkJson(TypedDict):
    level: int
    subtype: SymbolSiteJson
    supertype: SymbolSiteJson
    path: str
    line: int
    column: int
    viaExtension: bool
    relation: Annotated[str, _one_of("inherits", "conforms", "refines")]


class LocalSubtypeJson(TypedDict):
    """A type declared in a function body (the index records no local declarations) whose
    inheritance clause names the type: found in the source at the index's reference."""

    name: str
    kind: str
    path: str
    line: int
    column: int
    text: str


class TypeHierarchyJson(VerdictJson):
    root: SymbolSiteJson | None
    direction: str
    depth: int
    links: list[TypeLinkJson]
    linkCount: int
    localSubtypes: list[LocalSubtypeJson]
    """Subtypes only: types declared inside function bodies that inherit or conform (no usr)."""
    truncated: bool


class ChangedSymbolJson(TypedDict):
    usr: str | None
    name: str
    kind: str
    path: str
    line: int
    change: ChangeText
    matchedBy: Annotated[str, _one_of("definition", "name")]


class ChangeImpactJson(VerdictJson):
    base: str
    changedFiles: list[str]
    changedSymbols: list[ChangedSymbolJson]
    references: list[OccurrenceJson]
    referenceCount: int
    dependentFiles: list[str]
    coveringTests: list[SelectedTestJson]
    coveringTestCount: int
    testFilters: list[TestFilterJson]
    swiftTestCommand: str | None
    selection: TestSelectionJson
    rangesApproximate: bool
    rangeMethod: str
    gitMs: float
    truncated: bool
