//go:build race

package module

func init() { raceEnabled = true }
