package relockotel

// Version is this module's version, without the "v" of its tag
// relockotel/vX.Y.Z. It is the version of the Observer's instrumentation
// scope. A constant, not debug.ReadBuildInfo: build info has no version
// for the main module or in tests ("(devel)"), nor in binaries built
// without module information, while a scope's version should name the
// code that emitted the data wherever it runs. RELEASING.md sets it in
// the release commit, and CI checks it against the tag a consumer
// resolves (.ci/run).
const Version = "0.1.0"
