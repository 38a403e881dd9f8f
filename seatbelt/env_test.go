package seatbelt

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFilterEnv(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env, deny []string
		want      []string
	}{
		{"nil env is empty, not inherited", nil, nil, []string{}},
		{"no globs keeps all", []string{"A=1", "B=2"}, nil, []string{"A=1", "B=2"}},
		{"prefix glob", []string{"AWS_SECRET_ACCESS_KEY=x", "AWSX=1", "PATH=/bin"}, []string{"AWS_*"}, []string{"AWSX=1", "PATH=/bin"}},
		{"suffix glob", []string{"GITHUB_TOKEN=x", "TOKEN=y", "MY_TOKEN_X=z"}, []string{"*_TOKEN"}, []string{"TOKEN=y", "MY_TOKEN_X=z"}},
		{"exact name", []string{"OPENAI_API_KEY=x", "OPENAI_API_KEYS=y"}, []string{"OPENAI_API_KEY"}, []string{"OPENAI_API_KEYS=y"}},
		{"case-sensitive", []string{"aws_key=x"}, []string{"AWS_*"}, []string{"aws_key=x"}},
		{"value is not matched", []string{"X=AWS_SECRET"}, []string{"AWS_*"}, []string{"X=AWS_SECRET"}},
		{"duplicates both dropped", []string{"SECRET=1", "A=1", "SECRET=2"}, []string{"SECRET"}, []string{"A=1"}},
		{"entry without = dropped", []string{"NOEQUALS", "=nameless", "A=1"}, nil, []string{"A=1"}},
		{"empty value kept", []string{"A="}, nil, []string{"A="}},
		{"character class", []string{"K1=a", "K2=b", "K3=c"}, []string{"K[12]"}, []string{"K3=c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := filterEnv(tc.env, tc.deny)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("nil result would make exec inherit the parent's environment")
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestFilterEnvBadGlob(t *testing.T) {
	// The bad glob comes after one that matches everything: the error must
	// not depend on whether matching ever reaches it.
	if _, err := filterEnv([]string{"A=1"}, []string{"*", "SECRET_["}); err == nil {
		t.Error("malformed glob accepted")
	}
}

func TestSetEnv(t *testing.T) {
	got := setEnv([]string{"TMPDIR=/a", "X=1", "TMPDIR=/b"}, "TMPDIR", "/c")
	if diff := cmp.Diff(got, []string{"X=1", "TMPDIR=/c"}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	in := []string{"A=1", "B=2"}
	_ = setEnv(in, "A", "3")
	if diff := cmp.Diff(in, []string{"A=1", "B=2"}); diff != "" {
		t.Errorf("setEnv modified its input (-got +want):\n%s", diff)
	}
}
