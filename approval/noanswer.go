package approval

// NoAnswerError is a Prompter's error when the request was put to a
// person but no answer can come: the approval broker that held it went
// away. The gate refuses the request (77) with Why, and records By as
// who decided; it never runs it.
type NoAnswerError struct {
	// By is what the audit records as the decider ("broker").
	By  string
	Why string
}

func (e *NoAnswerError) Error() string { return e.Why }
