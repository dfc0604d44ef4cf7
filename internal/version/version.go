// Package version names the release of orcc and orcrun; plans record it.
package version

// Compiler is orcc's version; plans record it.
const Compiler = "0.1.0"
