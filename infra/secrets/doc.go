// Package secrets resolves the secrets stage templates read ({{secret "name"}}) from a
// directory of one file per secret, as Kubernetes mounts a Secret or systemd passes
// credentials (serve --secrets-dir). A file is read at each use, so a rotated secret is used
// from its next attempt on; its value is the file's content without one trailing newline.
package secrets
