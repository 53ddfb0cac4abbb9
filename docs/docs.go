// Package docs embeds the user documentation dynops quotes from: the
// guideline's rule sections are the help text of `dynops check`'s SARIF rules.
package docs

import _ "embed"

// Guideline is docs/guideline.md.
//
//go:embed guideline.md
var Guideline string
