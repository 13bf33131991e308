package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// statusCollector reports executor_plans and executor_tasks by status, counted when scraped.
// Every status has a series, 0 when nothing has it, so dashboards see no gaps.
type statusCollector struct {
	counts func() (map[plan.Status]int, map[task.Status]int)
	plans  *prometheus.Desc
	tasks  *prometheus.Desc
}

func newStatusCollector(counts func() (map[plan.Status]int, map[task.Status]int)) *statusCollector {
	return &statusCollector{
		counts: counts,
		plans: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "plans"),
			"Plans this executor holds, by status (on Redis: those it created, ran or read since it started; not a cluster-wide count).",
			[]string{"status"}, nil),
		tasks: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "tasks"),
			"Tasks this executor holds, by status (on Redis: those it created, ran or read since it started; not a cluster-wide count).",
			[]string{"status"}, nil),
	}
}

// Describe sends the two descriptors.
func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.plans
	ch <- c.tasks
}

// Collect counts the plans and tasks and sends one gauge per status.
func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	plans, tasks := c.counts()
	for _, s := range plan.Statuses {
		ch <- prometheus.MustNewConstMetric(c.plans, prometheus.GaugeValue, float64(plans[s]), string(s))
	}
	for _, s := range task.Statuses {
		ch <- prometheus.MustNewConstMetric(c.tasks, prometheus.GaugeValue, float64(tasks[s]), string(s))
	}
}
