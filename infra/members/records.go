package members

import (
	"encoding/json"
	"time"
)

// registration is the value of an executor's field in the executors HASH.
type registration struct {
	Name        string    `json:"name"`
	Address     string    `json:"address"`
	StartedAt   time.Time `json:"startedAt"`
	Version     string    `json:"version,omitempty"`
	HeartbeatAt time.Time `json:"heartbeatAt"`
	Runs        int       `json:"runs"`
	Topology    string    `json:"topology,omitempty"`
	Kinds       []string  `json:"kinds,omitempty"`
}

// heartbeat is the value of an executor's liveness key.
type heartbeat struct {
	HeartbeatAt time.Time `json:"heartbeatAt"`
	Runs        int       `json:"runs"`
	// Instance is the random token of the process that wrote it.
	Instance string `json:"instance"`
}

// marshal encodes a record; the records hold nothing json.Marshal can refuse.
func marshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// instanceMarker is the part of a heartbeat's JSON that names its instance: what the scripts
// look for in the key's value.
func instanceMarker(instance string) string {
	return `"instance":` + marshal(instance)
}
