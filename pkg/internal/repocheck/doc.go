// Package repocheck holds checks over the whole repository's source that no
// single module owns; its tests run with the pkg module's (make test).
package repocheck
