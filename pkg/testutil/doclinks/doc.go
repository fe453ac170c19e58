// Package doclinks holds the test that keeps the documentation's links
// working: every relative link in README.md and docs/**/*.md names a file
// of the repository, and every #anchor a heading of that file.
package doclinks
