// Package docs_test checks that the repository's documentation stands on its own and agrees
// with the code where a reader would act on it: no reference to files outside the repository,
// every relative link resolves, the documented failure classes and exit codes are the code's,
// and `make test` installs what it needs quietly.
package docs_test

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/domain/stage"
)

// root is the repository's root, seen from this package.
const root = ".."

// textFiles returns the repository's source and documentation files (not .git, not binaries).
func textFiles(t *testing.T) []string {
	t.Helper()
	exts := map[string]bool{".go": true, ".md": true, ".yaml": true, ".yml": true, ".json": true,
		".js": true, ".html": true, ".css": true, ".lua": true, ".sh": true, "": true}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "testdata" || name == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if exts[filepath.Ext(path)] {
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// A clone of the repository holds everything its code and docs refer to: the product design
// is docs/design.md, never a file beside the repository.
func TestRepositoryStandsOnItsOwn(t *testing.T) {
	t.Parallel()
	outside := []string{"../" + "shared", "DESIGN" + ".md", "DESIGN" + " §"}
	for _, path := range textFiles(t) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, s := range outside {
			assert.NotContains(t, string(b), s, "%s refers to something outside the repository: point it at docs/design.md", path)
		}
	}
	design, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	require.NoError(t, err)
	for _, section := range []string{"## 3. Domain", "## 5. Redis", "## 6. Degraded mode", "## 7. Interfaces", "## 9. Decisions"} {
		assert.Contains(t, string(design), section, "docs/design.md")
	}
}

// markdownLink is a link of a Markdown page: [text](target).
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link of the README and of docs/ names a file of the repository.
func TestRelativeLinksResolve(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	pages = append(pages, filepath.Join(root, "README.md"))
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, m := range markdownLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			_, err := os.Stat(filepath.Join(filepath.Dir(page), target))
			assert.NoError(t, err, "%s links to %s", page, m[1])
			checked++
		}
	}
	require.Positive(t, checked, "no relative link found: the pattern is wrong")
}

// `make test` installs what it lacks without recommended packages (Chromium's pull in avahi,
// udev and a systemd upgrade) and without flooding the log.
func TestMakefileInstallsQuietlyWithoutRecommends(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	installs := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "apt-get install") {
			continue
		}
		installs++
		assert.Contains(t, line, "--no-install-recommends", "Makefile: %s", line)
		if !strings.Contains(line, "sudo") { // what the Makefile runs, not the hint it prints
			assert.Contains(t, line, "-qq", "Makefile: %s", line)
		}
	}
	require.NoError(t, sc.Err())
	require.GreaterOrEqual(t, installs, 3, "the Makefile installs redis-server and chromium")
	runs := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "$(APT_INSTALL) ") {
			runs++
			assert.Contains(t, line, ">$(APT_LOG) 2>&1", "apt's output goes to a log file: %s", line)
		}
	}
	require.GreaterOrEqual(t, runs, 2, "the Makefile installs through $(APT_INSTALL)")
}

// The runbook's exit code for a bad --http-allow entry is the CLI's usage exit code.
func TestRunbookExitCodeOfABadAllowList(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(root, "docs", "runbook.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)A bad entry .{0,200}?stops `serve`.{0,120}?\\(exit (\\d)").FindSubmatch(b)
	require.NotNil(t, m, "docs/runbook.md no longer says how serve exits on a bad --http-allow entry")
	code, err := strconv.Atoi(string(m[1]))
	require.NoError(t, err)
	assert.Equal(t, cli.ExitUsage, code)
}

// docs/api.md's table of failure classes and docs/openapi.yaml's FailureClass list every class
// the code has, and nothing else.
func TestFailureClassesDocumented(t *testing.T) {
	t.Parallel()
	want := make([]string, 0, len(stage.Classes()))
	for _, c := range stage.Classes() {
		want = append(want, string(c))
	}

	api, err := os.ReadFile(filepath.Join(root, "docs", "api.md"))
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(api), "## Failure classes")
	require.True(t, ok, "docs/api.md has no Failure classes section")
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(table, -1) {
		documented = append(documented, m[1])
	}
	assert.ElementsMatch(t, want, documented, "docs/api.md, Failure classes")

	b, err := os.ReadFile(filepath.Join(root, "docs", "openapi.yaml"))
	require.NoError(t, err)
	var doc struct {
		Components struct {
			Schemas struct {
				FailureClass struct {
					Enum []string `yaml:"enum"`
				} `yaml:"FailureClass"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	require.NoError(t, yaml.Unmarshal(b, &doc))
	assert.ElementsMatch(t, want, doc.Components.Schemas.FailureClass.Enum, "docs/openapi.yaml, FailureClass")
}
