package orchestrator

import "github.com/executor-dev/executor/domain/stage"

// Secrets resolves the secrets stage templates read ({{secret "name"}}): infra/secrets.Dir,
// serve's --secrets-dir.
type Secrets interface {
	// Secret returns the value of secret name.
	Secret(name string) (string, error)
}

// resolve is an attempt's stage.Data.Secret, recording what it reads in r (which hides the
// values in what the attempt leaves behind: its ledger entry, its failure, its output, its
// log lines): nil without Config.Secrets.
func (o *core) resolve(r *stage.Redactor) func(name string) (string, error) {
	if o.cfg.Secrets == nil {
		return nil
	}
	return r.Resolver(o.cfg.Secrets.Secret)
}
