package approval

import (
	"reflect"
	"testing"
)

func TestJoinRuns(t *testing.T) {
	recs := []Record{
		{Script: "a", Outcome: OutcomeStarted, Run: "1", Zones: "w /w (rw); network off"},
		{Script: "b", Outcome: OutcomeStarted, Run: "2", Zones: "z"},
		{Script: "c", Outcome: "refused", Run: "3"},
		{Script: "a", Outcome: "ran", Run: "1"},
		{Script: "old", Outcome: "ran"}, // a record from before runs were joined
	}
	got := JoinRuns(recs)
	want := []Record{
		{Script: "b", Outcome: OutcomeStarted, Run: "2", Zones: "z"},
		{Script: "c", Outcome: "refused", Run: "3"},
		{Script: "a", Outcome: "ran", Run: "1", Zones: "w /w (rw); network off"},
		{Script: "old", Outcome: "ran"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JoinRuns:\n got %+v\nwant %+v", got, want)
	}
	if recs[0].Script != "a" || recs[0].Outcome != OutcomeStarted {
		t.Error("JoinRuns changed its input")
	}
}
