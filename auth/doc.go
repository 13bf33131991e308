// Package auth holds the executor's bearer tokens and their roles (docs/api.md, Auth).
//
// A token has one role: read (every GET) or operate (read, plus every mutating route). Tokens
// come from configuration (EXECUTOR_TOKENS or --tokens-file), each at least MinTokenLength
// bytes; Keys.Match compares a presented token with every configured one in constant time,
// so neither a token's content nor its position leaks through timing. A token's secret is
// never logged: Token's String and LogValue print its role and a short fingerprint only.
package auth
