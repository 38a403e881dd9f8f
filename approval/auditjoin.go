package approval

// JoinRuns folds each command's started record into the record of its
// end (the two share Run), so a command shows once: as its end when it has
// one, and as the started record alone when it never got one (guardrun
// was killed while the command ran, or the command still runs). The
// result keeps the order of the records, a joined command at its end.
func JoinRuns(recs []Record) []Record {
	ended := map[string]bool{}
	zones := map[string]string{}
	for _, r := range recs {
		switch {
		case r.Run == "":
		case r.Outcome == OutcomeStarted:
			zones[r.Run] = r.Zones
		default:
			ended[r.Run] = true
		}
	}
	out := recs[:0:0]
	for _, r := range recs {
		if r.Outcome == OutcomeStarted && r.Run != "" && ended[r.Run] {
			continue
		}
		if r.Zones == "" && r.Run != "" {
			r.Zones = zones[r.Run]
		}
		out = append(out, r)
	}
	return out
}

// OutcomeStarted is the Outcome of the record written as a command starts.
const OutcomeStarted = "started"
