//go:build !race

package codebox

// raceEnabled: see race.go.
const raceEnabled = false
