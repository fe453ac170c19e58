package evalrun

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/google/uuid"
)

// ScenarioID is the scenario id of a run's source item (UUIDv5 in the run
// id's namespace): a run job delivered again after a crash mints the same
// ids, which the registry answers with the stored scenarios, so a run
// never gets a scenario twice.
func ScenarioID(runID, item string) string {
	ns, err := uuid.Parse(runID)
	if err != nil {
		ns = uuid.NameSpaceURL
		item = runID + "|" + item
	}
	return uuid.NewSHA1(ns, []byte(item)).String()
}

// TraceID is the trace id of a cell's invocation (docs/decisions/0006: the
// first 16 bytes of SHA-256(run|scenario|step|repeat)), so executing a cell
// again rewrites its trace instead of adding one.
func TraceID(runID, scenarioID, stepKey string, repeat int) string {
	h := sha256.Sum256([]byte(runID + "|" + scenarioID + "|" + stepKey + "|" + strconv.Itoa(repeat)))
	return hex.EncodeToString(h[:16])
}
