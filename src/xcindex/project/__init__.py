"""The user's project on disk, apart from the index: where a package, Xcode project or index
store is (locate, candidates, workspace roots, the store's folder layout), the Swift toolchain,
SwiftPM's package description, and the session ledger of edited files.

Import-light (the standard library and `xcindex.vocabulary`): the hooks run these on every edit.
"""
