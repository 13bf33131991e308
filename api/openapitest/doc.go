// Package openapitest checks what the API answers against its OpenAPI description,
// docs/openapi.yaml, with kin-openapi: a Validator wraps the router (server.Config.Wrap, as
// servertest does for every executor a test starts) and fails the test for any answer the
// description does not allow (an undeclared status, a body that breaks its schema, a content
// type it does not list, a header it declares with another form). Requests are not checked:
// tests send malformed ones on purpose, and what the API answers them is checked like the rest.
package openapitest
