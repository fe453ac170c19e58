// Package console embeds the web console's built single-page app
// (services/console/web, built by `make console` into web/dist).
package console

import (
	"embed"
	"io/fs"
)

// dist holds web/dist as it was when the binary was built: only the
// committed .keep when the web project was not built.
//
//go:embed all:web/dist
var dist embed.FS

// Dist returns the built app's files, rooted at web/dist.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "web/dist")
	if err != nil { // cannot happen: the directory is embedded
		panic(err)
	}
	return sub
}
