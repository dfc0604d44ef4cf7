// Package version names the compiler release recorded in every plan.
package version

// Compiler is orcc's version; plans record it.
const Compiler = "0.1.0"
