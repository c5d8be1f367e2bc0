"""The documented vocabulary: warning codes, refusal reasons, tiers and range reasons.

Spelled exactly as in the tools documentation; every fault in the code base is expressed
with one of these so that agents can branch on a stable machine-readable value.
"""

from __future__ import annotations

from enum import StrEnum


class WarningCode(StrEnum):
    """Non-fatal diagnostics attached to an answer."""

    # Reconciliation with sourcekit-lsp (plan_rename and cross-checks).
    RECONCILIATION_UNAVAILABLE = "reconciliation_unavailable"
    RECONCILIATION_EMPTY = "reconciliation_empty"
    # Workspace checks.
    WORKSPACE_ROOT_UNRESOLVED = "workspace_root_unresolved"
    COMPILE_COMMANDS_MISSING = "compile_commands_missing"
    SOURCEKIT_LSP_NEEDS_COMPILE_COMMANDS = "sourcekit_lsp_needs_compile_commands"
    # sourcekit-lsp process faults.
    SOURCEKIT_LSP_NOT_FOUND = "sourcekit_lsp_not_found"
    SOURCEKIT_LSP_BINARY_NOT_EXECUTABLE = "sourcekit_lsp_binary_not_executable"
    SOURCEKIT_LSP_LAUNCH_FAILED = "sourcekit_lsp_launch_failed"
    SOURCEKIT_LSP_TIMEOUT = "sourcekit_lsp_timeout"
    SOURCEKIT_LSP_PROCESS_TERMINATED = "sourcekit_lsp_process_terminated"
    SOURCEKIT_LSP_NOT_RUNNING = "sourcekit_lsp_not_running"
    SOURCEKIT_LSP_PROTOCOL_ERROR = "sourcekit_lsp_protocol_error"
    SOURCEKIT_LSP_ERROR = "sourcekit_lsp_error"
    LSP_FILE_READ_FAILED = "lsp_file_read_failed"
    # Index store faults (ours, beyond the original's list).
    INDEX_UNIT_UNREADABLE = "index_unit_unreadable"
    INDEX_RECORD_UNREADABLE = "index_record_unreadable"
    DERIVED_DATA_NAME_MATCH = "derived_data_name_match"
    INDEX_BUILT_ELSEWHERE = "index_built_elsewhere"
    """The project's index holds another folder's sources (a package copied or moved after
    its build): answers name that folder's files; labelled stale, the overlay is off."""
    # The freshness overlay (a file edited since the last build, re-indexed on its own).
    OVERLAY_FAILED = "overlay_failed"
    """The compiler could not index the edited file as it is now (a syntax or type error,
    a timeout): it keeps its last build's index and stays labelled stale."""
    OVERLAY_UNAVAILABLE = "overlay_unavailable"
    """No compiler arguments for the file (no SwiftPM build description: an Xcode project,
    a file the last build did not compile): it stays labelled stale."""
    FILE_OUTSIDE_TARGETS = "file_outside_targets"
    """A Swift file of the project in the folder of no target the last build compiled (beside
    the targets, or in a target this platform does not build): no build here indexes it."""
    OVERLAY_PENDING = "overlay_pending"
    """The file is being re-indexed but was not done within the question's wait: it is
    labelled stale in this answer; the next question (or wait_for_fresh) sees it fresh."""
    # Index-side faults of a whole call (raised as CodedError, logged with the code).
    INDEX_QUERY_TIMEOUT = "index_query_timeout"
    INDEX_FIRST_INGESTION_RUNNING = "index_first_ingestion_running"
    # plan_rename: what the plan cannot prove, or what changes meaning while it builds.
    LSP_RANGE_OFF_NAME = "lsp_range_off_name"
    UNPROVEN_OCCURRENCES = "unproven_occurrences"
    SHARED_DEFAULT_IMPLEMENTATION = "shared_default_implementation"
    CODABLE_KEY_RENAMED = "codable_key_renamed"
    PROPERTY_WRAPPER_DERIVED_NAME = "property_wrapper_derived_name"
    OBJC_SELECTOR = "objc_selector"
    STRING_KEYED_LOOKUP = "string_keyed_lookup"
    NAME_OVERLOAD = "name_overload"
    """The new name is taken where a renamed symbol lives, in a way the compiler accepts (an
    overload by types, a member that now shadows or witnesses an inherited one)."""
    WITNESS_IN_OTHER_MODULE = "witness_in_other_module"
    """A renamed witness is related to the requirement only by a conformance another module
    declares: the rename changes its own module's API for that module's sake."""


class ProjectKind(StrEnum):
    """What a project path names (the index store itself, for a bare indexStorePath)."""

    SWIFTPM = "swiftpm"
    XCODE = "xcode"
    STORE = "store"


class FailureKind(StrEnum):
    """What kind of index-store file could not be read."""

    UNIT = "unit"
    RECORD = "record"


class MatchedBy(StrEnum):
    """How find_symbol's candidates matched the name (docs/tools.md, "Resolving names")."""

    EXACT = "exact"
    BASE_NAME = "base_name"
    PARTIAL_LABELS = "partial_labels"
    NONE = "none"


class Completeness(StrEnum):
    """How far an answer can be trusted, so that an empty list is never ambiguous."""

    COMPLETE = "complete"
    STALE = "stale"
    NO_INDEX = "no_index"
    INDEXING = "indexing"
    PARTIAL = "partial"


class RefusalReason(StrEnum):
    DISABLED_BY_ENV = "disabled_by_env"
    INVALID_IDENTIFIER = "invalid_identifier"
    SYNTHESIZED_SYMBOL_NOT_RENAMEABLE = "synthesized_symbol_not_renameable"
    SDK_SYMBOL_RENAME = "sdk_symbol_rename"
    USR_NOT_FOUND = "usr_not_found"
    SPECIAL_MEMBER_NOT_RENAMEABLE = "special_member_not_renameable"
    COMPILER_REQUIRED_NAME = "compiler_required_name"
    LOCAL_SYMBOL_NOT_RENAMEABLE = "local_symbol_not_renameable"
    INDEX_BUILT_ELSEWHERE = "index_built_elsewhere"
    """The project's index holds another folder's sources: a plan would edit that folder."""
    NAME_COLLISION = "name_collision"
    """The new name is taken where a renamed symbol lives, in a way the compiler refuses
    (an invalid redeclaration, an override without `override`)."""


class Tier(StrEnum):
    GREEN_VERIFIED = "green-verified"
    GREEN_INDEXSTORE = "green-indexstore"
    YELLOW_DISAGREEMENT = "yellow-disagreement"
    YELLOW_LSP_ONLY = "yellow-lsp-only"
    RED_STALE = "red-stale"


class RangeReason(StrEnum):
    DIRECT_REFERENCE = "direct_reference"
    OVERRIDE = "override"
    CONFORMANCE_WITNESS = "conformance_witness"
    EXTENSION_MEMBER = "extension_member"
    MACRO_ADJACENT = "macro_adjacent"
    SOURCEKIT_LSP_ONLY = "sourcekit_lsp_only"
    LSP_DID_NOT_ECHO = "lsp_did_not_echo"
    SESSION_EDITED = "session_edited"
    RANGE_END_COMPUTED_UNVERIFIED = "range_end_computed_unverified"
    SDK_SYMBOL = "sdk_symbol"
    SYNTHESIZED_SYMBOL = "synthesized_symbol"
    OBJC_BRIDGE = "objc_bridge"
    COMPILE_COMMANDS_MISSING = "compile_commands_missing"
    FILE_NEWER_THAN_UNIT = "file_newer_than_unit"
    WITNESS_BY_SIGNATURE = "witness_by_signature"
    WITNESS_IN_OTHER_PROTOCOL_EXTENSION = "witness_in_other_protocol_extension"
    LSP_MAPPED_TO_NAME = "lsp_mapped_to_name"
    SETTLED_AT_SITE = "settled_at_site"


MISSING_LOCATION = "Either 'projectPath' or 'indexStorePath' must be provided."
"""Every tool needs one of the two; said the same way by the server, the Engine and locate."""
