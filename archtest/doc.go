// Package archtest holds no code: its tests check that the architecture docs/architecture.md
// describes is the code's. The import rules (which package may import which) are listed
// there once, in the block after the "imports: checked by archtest" marker, and the test
// fails both for an import the block does not allow and for an arrow no import draws.
package archtest
