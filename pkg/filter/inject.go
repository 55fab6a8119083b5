package filter

import (
	"bytes"
	"regexp"
	"strings"
)

// The deterministic injection floor. Each family has anchor words (matched case-insensitively
// at word starts) and RE2 patterns. The scan is one pass over the text: only an anchor hit
// evaluates that family's patterns, over a window from the start of the hit's line to the end
// of the following line (so a phrase wrapped once still matches), lower-cased. Hidden HTML
// (comments, hidden elements, markdown link-reference comments) is inspected whole.

// sep stands for the space in the patterns below: whitespace (including one line break) and
// the markdown emphasis and quoting characters an attacker can sprinkle between words.
const sep = `[\s*_~"'\x60>]+`

const (
	neg     = `(?:do not|don't|don’t|dont|never|must not|mustn't|should not|shouldn't|you will not|you won't)`
	aiNoun  = `(?:ai|a\.i\.|llm|large language model|language model|ai assistant|ai agent|coding agent|coding assistant|assistant|agent|model|chatbot|copilot|claude|chatgpt|gpt|gemini|codex|devin|cursor)`
	human   = `(?:user|human|operator|maintainer|owner|requester|developer|reviewer)s?`
	secretN = `(?:secrets?|credentials?|tokens?|environment variables?|env vars?|env variables?|api keys?|ssh keys?|private keys?|passwords?|\$?github_token|\.env(?: files?)?)`
	files   = `(?:~/|\$home/|/root/|/home/[a-z0-9_-]+/)?(?:\.ssh/id_[a-z0-9_]*|\.ssh\b|id_rsa|id_ed25519|id_ecdsa|id_dsa|\.aws/credentials|\.netrc|\.git-credentials|\.docker/config\.json|\.npmrc|\.pypirc|/etc/shadow|\.kube/config|/proc/self/environ|\.config/gh/hosts\.yml|application_default_credentials\.json)`
	sinks   = `(?:\bcurl\b|\bwget\b|\bnc\b|\bncat\b|\bnetcat\b|https?://|webhook)`
)

// rule is one injection pattern. It is tried only at a word start whose word begins with one
// of starts (case-insensitive prefix), and its regexp is anchored there, over the lower-cased
// text from that word up to 400 bytes (never past the second line break after it). hidden
// rules apply only inside hidden HTML regions.
type rule struct {
	code     code
	starts   []string
	re       *regexp.Regexp
	hidden   bool
	lineLead bool     // the match must be preceded, on its line or in its region, only by [ \t*#>-]
	need     []string // at least one must occur in the segment before the regexp runs (cheap reject)
	gap      bool     // "A … B on one line" rule: searched unanchored over a window, see atWord
}

// needs returns r with a cheap literal precondition.
func (r rule) needs(w ...string) rule { r.need = w; return r }

// gapRule compiles an unanchored "A … B on one line" rule.
func gapRule(c code, starts []string, pattern string) rule {
	return rule{code: c, starts: starts, gap: true, re: regexp.MustCompile(pattern)}
}

func mkRule(c code, starts []string, pattern string) rule {
	return rule{code: c, starts: starts, re: regexp.MustCompile(`^(?:` + strings.ReplaceAll(pattern, " ", sep) + `)`)}
}

var (
	negStarts   = []string{"do", "don't", "don’t", "dont", "never", "must", "should", "you"}
	aiStarts    = []string{"ai", "a.i.", "llm", "large", "language", "assistant", "agent", "model", "chatbot", "copilot", "claude", "chatgpt", "gpt", "gemini", "codex", "devin", "cursor", "coding"}
	secretStart = []string{"secret", "credential", "token", "environment", "env", "api", "ssh", "private", "password", "$github_token", "github_token"}
	actStarts   = []string{"read", "cat", "print", "output", "show", "display", "dump", "open", "include", "paste", "post", "add", "put", "write", "reveal"}
)

var rules = []rule{
	mkRule(cInstructionOverride, []string{"ignor", "disregard", "forget", "overrid", "bypass"},
		`(?:ignore|disregard|forget|override|bypass)(?: all| any| each| every| of| the| your| my| these| those)* (?:previous|prior|preceding|above|earlier|original|initial|system|developer|safety|old|former)(?: and [a-z]+)? (?:instructions?|prompts?|directives?|guidelines|guardrails)\b`).needs("instruction", "prompt", "directive", "guideline", "guardrail"),
	mkRule(cInstructionOverride, []string{"ignor", "disregard", "forget"},
		`(?:ignore|disregard|forget) (?:everything|all(?: of it)?|anything) (?:above|before|prior|previously|you (?:were|have been) (?:told|given))\b`).needs("everything", "all", "anything"),
	mkRule(cInstructionOverride, []string{"do", "don't", "don’t", "dont", "never", "stop"},
		`(?:(?:do not|don't|don’t|dont|never) (?:follow|obey)|stop (?:following|obeying)) (?:your|the|any) (?:previous|prior|original|system|above|initial) (?:instructions?|prompts?|directives?|guidelines)\b`).needs("instruction", "prompt", "directive", "guideline"),
	mkRule(cInstructionOverride, []string{"your"},
		`your (?:new|real|actual|true|updated|only) (?:instructions?|directives?) (?:are|is|now|follow|:)`).needs("instruction", "directive"),

	mkRule(cSystemPrompt, []string{"new", "updated", "real", "actual", "revised", "true", "replacement", "overriding"},
		`(?:new|updated|real|actual|revised|true|replacement|overriding) system (?:prompt|message|instructions?)(?: is| are| reads| follows|\s*:)`).needs("system"),
	mkRule(cSystemPrompt, []string{"replace", "overrid", "overwrite", "reset", "forget", "ignor", "disregard"},
		`(?:replace|override|overwrite|reset|forget|ignore|disregard) your system (?:prompt|message|instructions?)\b`).needs("system"),
	mkRule(cSystemPrompt, []string{"reveal", "print", "output", "repeat", "show", "leak", "dump"},
		`(?:reveal|print|output|repeat|show|leak|dump) (?:me )?your (?:full |entire |hidden |original )?system (?:prompt|message|instructions?)\b`).needs("system"),

	mkRule(cUnrestrictedRole, []string{"you", "act", "pretend", "roleplay", "role-play", "behave", "become"},
		`(?:you are|you're|you’re|act as|acting as|pretend to be|pretend you are|roleplay as|role-play as|behave as|become)(?: now)?(?: an?)? (?:unrestricted|unfiltered|uncensored|jailbroken|unlimited|amoral|unbound|evil|rogue) (?:ai|assistant|model|chatbot|llm|agent|version|mode)\b`).needs("unrestrict", "unfilter", "uncensor", "jailbr", "unlimited", "amoral", "unbound", "evil", "rogue"),
	mkRule(cUnrestrictedRole, []string{"enable", "activate", "enter", "switch", "you"},
		`(?:enable|activate|enter|switch to|you are (?:now )?in) (?:dan|jailbreak|jailbroken|unrestricted|god|developer) mode\b`).needs("mode"),
	mkRule(cUnrestrictedRole, []string{"do"}, `do anything now\b`).needs("anything"),
	mkRule(cUnrestrictedRole, []string{"you"},
		`you(?: are|'re|’re)(?: now)? (?:no longer|not) (?:bound|restricted|limited|constrained) by (?:any|your|the|openai|anthropic)`).needs("bound", "restrict", "limited", "constrain"),
	mkRule(cUnrestrictedRole, []string{"you"},
		`you (?:have|has) no (?:restrictions|limitations|rules|guidelines|filters|content policy)\b`).needs("restriction", "limitation", "rules", "guideline", "filter", "policy"),

	mkRule(cConcealment, negStarts,
		neg+` (?:tell|inform|alert|mention (?:this|it|anything) to|reveal (?:this|it|anything) to|disclose (?:this|it|anything) to) (?:the |your |any )?`+human+` (?:about|that you|what you|of (?:this|these)|anything)`).needs("user", "human", "operator", "maintainer", "owner", "requester", "developer", "reviewer"),
	mkRule(cConcealment, []string{"keep", "hide"},
		`(?:keep|hide) (?:this|these instructions|it|the following|your actions|what you do) (?:secret |hidden )?from (?:the |your |any )?`+human+`\b`).needs("from"),
	mkRule(cConcealment, negStarts,
		neg+` (?:mention|reveal|disclose|acknowledge) (?:these|this|the above|the following|my) (?:instructions?|message|comment|prompt)\b`).needs("instruction", "message", "comment", "prompt"),
	mkRule(cConcealment, []string{"so", "such"},
		`(?:so|such) (?:that )?the `+human+` (?:does not|doesn't|won't|will not|cannot|can't) (?:notice|know|find out|see)\b`).needs("notice", "know", "find out", "see"),

	mkRule(cExfiltration, []string{"exfiltrat"}, `exfiltrat[a-z]* .{0,60}?`+secretN),
	mkRule(cExfiltration, secretStart, secretN+` .{0,60}?\bexfiltrat`),
	mkRule(cExfiltration, []string{"send", "post", "upload", "transmit", "forward", "email", "leak", "copy", "paste"},
		`(?:send|post|upload|transmit|forward|email|leak|copy|paste)(?: me| us)?(?: all| the| your| any| every| of)*(?: contents? of| values? of)?(?: all| the| your| any| every)* `+secretN+`\b.{0,80}?\b(?:to|into|at|via) (?:https?://|[a-z0-9-]+(?:\.[a-z0-9-]+)+|my |our |an? (?:external|remote|third[- ]party) |the (?:attacker|webhook|following))`).needs("secret", "credential", "token", "env", "api", "ssh", "private", "password"),
	mkRule(cExfiltration, actStarts,
		`(?:read|cat|print|output|show|display|dump|open|include|paste|post|add|put|write|reveal)(?: the| your)?(?: contents? of| values? of)?(?: the| your| all)* (?:`+files+`|`+secretN+`)\S* .{0,60}?\b(?:in|into|to) (?:your|the|a) (?:reply|response|comment|answer|pr|pull request|issue|commit|output|review)\b`).needs("reply", "response", "comment", "answer", "pr", "issue", "commit", "output", "review"),
	mkRule(cExfiltration, []string{"printenv", "env", "set", "export", "proc"},
		`(?:printenv|env|set|export -p|proc/self/environ)\s*\|\s*(?:curl|wget|nc|ncat|netcat)\b`),
	gapRule(cExfiltration, []string{"curl", "wget"},
		`\b(?:curl|wget)\b[^\n]{0,200}(?:(?:\$\(|\x60)\s*(?:printenv|env)\b|`+files+`|(?:\s-d|--data[a-z-]*|\s-f|--form|\?[^\s]*=)\s*["']?[^\s]*\$\{?[a-z_]*(?:token|secret|password|_key)\b)`).needs("$", "`", "ssh", "id_", "aws", "netrc", "credentials", "docker", "npmrc", "pypirc", "shadow", "kube", "environ", "hosts.yml"),
	gapRule(cExfiltration, []string{"cat", "base64", "tar", "zip", "type"},
		`\b(?:cat|base64|tar|zip|type)\b[^\n|]{0,80}`+files+`[^\n]{0,120}\|\s*(?:curl|wget|nc|ncat|netcat)\b`).needs("curl", "wget", "nc"),

	mkRule(cTranslateExecute, []string{"translat", "decod", "deciph", "decrypt", "deobfusc", "unscrambl", "revers", "base64", "rot13", "rot-13"},
		`(?:translate|decode|decipher|decrypt|deobfuscate|unscramble|reverse|base64[- ]?decode|rot-?13)[a-z]* .{0,120}?(?:and|then|,|;) (?:then )?(?:execute|run|follow|obey|carry out|act on|perform|comply with) (?:it|them|the (?:result|results|resulting|decoded|translated|instructions?|message|payload|output|text)|(?:these|those) instructions|what it says)\b`).needs("execute", "run", "follow", "obey", "carry out", "act on", "perform", "comply"),

	// hidden HTML: content addressing an AI reader
	{code: cHiddenHTML, hidden: true, starts: []string{"if", "when", "since", "because"},
		re: regexp.MustCompile(`^(?:` + strings.ReplaceAll(`(?:if|when|since|because) you(?: are|'re|’re) (?:an?|the) `+aiNoun+`\b`, " ", sep) + `)`)},
	{code: cHiddenHTML, hidden: true, starts: []string{"note", "message", "instruction", "hint", "reminder", "directive", "attention", "important"},
		re: regexp.MustCompile(`^(?:` + strings.ReplaceAll(`(?:note|message|instructions?|hint|reminder|directive|attention|important) (?:to|for) (?:the |any |all )?`+aiNoun+`s?\b`, " ", sep) + `)`)},
	{code: cHiddenHTML, hidden: true, starts: []string{"dear", "hey", "hello", "hi"},
		re: regexp.MustCompile(`^(?:` + strings.ReplaceAll(`(?:dear|hey|hello|hi) `+aiNoun+`\b`, " ", sep) + `)`)},
	{code: cHiddenHTML, hidden: true, lineLead: true, starts: aiStarts,
		re: regexp.MustCompile(`^(?:` + aiNoun + `s?\s*[:,])`)},
}

// ruleTable indexes rules by the first byte (both cases) of each start word.
var ruleTable [256][]int

func init() {
	for k, r := range rules {
		seen := map[byte]bool{}
		for _, w := range r.starts {
			c := w[0]
			if seen[c] {
				continue
			}
			seen[c] = true
			ruleTable[c] = append(ruleTable[c], k)
			if c >= 'a' && c <= 'z' {
				ruleTable[c-'a'+'A'] = append(ruleTable[c-'a'+'A'], k)
			}
		}
	}
}

// hasPrefixFold reports whether b starts with the lower-case ASCII word w, ignoring case.
func hasPrefixFold(b []byte, w string) bool {
	if len(b) < len(w) {
		return false
	}
	for k := 0; k < len(w); k++ {
		c := b[k]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if c != w[k] {
			return false
		}
	}
	return true
}

type injScan struct {
	b       []byte
	c       *counts
	scratch []byte
	lastEnd [numCodes]int // absolute end of the last counted match per code
	covered []int         // per gap rule: every match starting before this was searched for
	gapBuf  []byte
	hidFrom int // current hidden region [hidFrom, hidTo)
	hidTo   int
}

// segment lower-cases b[i:] up to 400 bytes, stopping at the second line break.
func (s *injScan) segment(i int) []byte {
	s.scratch = s.scratch[:0]
	nl := 0
	for k := i; k < len(s.b) && k-i < 400; k++ {
		c := s.b[k]
		if c == '\n' {
			nl++
			if nl == 2 {
				break
			}
		}
		if isUpper(c) {
			c += 'a' - 'A'
		}
		s.scratch = append(s.scratch, c)
	}
	return s.scratch
}

// leadOK reports whether only [ \t*#>-] precede i back to its line start or the hidden
// region start.
func (s *injScan) leadOK(i int) bool {
	for k := i - 1; k >= s.hidFrom; k-- {
		switch s.b[k] {
		case ' ', '\t', '*', '#', '>', '-', '(':
			continue
		case '\n':
			return true
		}
		return false
	}
	return true
}

// gapWindow and gapMatch bound the gap rules: a match is at most gapMatch bytes long, so one
// search over [i, i+gapWindow) finds every match starting before i+gapWindow-gapMatch, and
// anchor hits before that are skipped. Each byte is searched a bounded number of times.
const (
	gapWindow = 2048
	gapMatch  = 512
)

func (s *injScan) gapSearch(k, i int) {
	r := &rules[k]
	if i < s.covered[k] {
		return
	}
	// Gap rules never match across a line break: the window ends at the line end when the
	// line is short enough, and then the whole rest of the line is covered.
	we := min(len(s.b), i+gapWindow)
	if nl := bytes.IndexByte(s.b[i:we], '\n'); nl >= 0 {
		we = i + nl
		s.covered[k] = we
	} else if we == len(s.b) {
		s.covered[k] = we
	} else {
		s.covered[k] = we - gapMatch
	}
	w := s.lowerRange(i, we)
	if r.need != nil && !containsAny(w, r.need) {
		return
	}
	for _, m := range r.re.FindAllIndex(w, -1) {
		if i+m[0] >= s.lastEnd[r.code] && i+m[0] < s.covered[k] {
			s.c[r.code]++
			s.lastEnd[r.code] = i + m[1]
		}
	}
}

// lowerRange lower-cases b[i:j] into a scratch buffer of its own.
func (s *injScan) lowerRange(i, j int) []byte {
	s.gapBuf = s.gapBuf[:0]
	for _, c := range s.b[i:j] {
		if isUpper(c) {
			c += 'a' - 'A'
		}
		s.gapBuf = append(s.gapBuf, c)
	}
	return s.gapBuf
}

// atWord tries every rule whose start word matches at the word start i.
func (s *injScan) atWord(i int) {
	var seg []byte
	inHidden := i >= s.hidFrom && i < s.hidTo
	for _, k := range ruleTable[s.b[i]] {
		r := &rules[k]
		if r.hidden && !inHidden {
			continue
		}
		if i < s.lastEnd[r.code] {
			continue
		}
		ok := false
		for _, w := range r.starts {
			if hasPrefixFold(s.b[i:], w) {
				ok = true
				break
			}
		}
		if !ok || (r.lineLead && !s.leadOK(i)) {
			continue
		}
		if r.gap {
			s.gapSearch(k, i)
			continue
		}
		if seg == nil {
			seg = s.segment(i)
		}
		if r.need != nil && !containsAny(seg, r.need) {
			continue
		}
		if m := r.re.FindIndex(seg); m != nil {
			s.c[r.code]++
			s.lastEnd[r.code] = i + m[1]
		}
	}
}

var (
	commentOpen  = []byte("<!--")
	commentClose = []byte("-->")
	hiddenAttr   = regexp.MustCompile(`\shidden(?:\s|=|/|$)|display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:[^.0-9]|$)|opacity\s*:\s*0(?:[^.0-9]|$)|(?:^|[^-])color\s*:\s*(?:transparent|white|#fff\b|#ffffff)`)
)

// hiddenAt inspects a hidden region starting at '<' (HTML comment or hidden element) or '['
// (markdown link-reference comment) and counts a hidden-html finding when its content
// may address an AI reader: it records the region so hidden rules apply to the words in it.
func (s *injScan) hiddenAt(p int) {
	b := s.b
	var cs, end int
	switch {
	case bytes.HasPrefix(b[p:], commentOpen):
		cs = p + len(commentOpen)
		k := bytes.Index(b[cs:], commentClose)
		if k < 0 {
			end = len(b)
		} else {
			end = cs + k + len(commentClose)
		}
	case b[p] == '<':
		// a tag: <name attrs>; hidden by attribute or style
		te := bytes.IndexByte(b[p:min(len(b), p+1024)], '>')
		if te < 0 {
			return
		}
		tag := b[p+1 : p+te]
		ne := 0
		for ne < len(tag) && isAlnum(tag[ne]) {
			ne++
		}
		if ne == 0 || ne == len(tag) || !hiddenAttr.Match(bytes.ToLower(tag[ne:])) {
			return
		}
		name := string(bytes.ToLower(tag[:ne]))
		cs = p + te + 1
		end = findCloseTag(b, cs, name)
	case bytes.HasPrefix(b[p:], []byte("[//]: #")) || bytes.HasPrefix(b[p:], []byte("[comment]: #")) || bytes.HasPrefix(b[p:], []byte("[comment]: <>")):
		cs = p + bytes.IndexByte(b[p:], '#') + 1
		if b[cs-1] != '#' {
			cs = p + bytes.Index(b[p:], []byte("<>")) + 2
		}
		e := bytes.IndexByte(b[p:], '\n')
		if e < 0 {
			end = len(b)
		} else {
			end = p + e
		}
	default:
		return
	}
	if end <= s.hidTo {
		return
	}
	s.hidFrom, s.hidTo = cs, end
}

// findCloseTag returns the index of the first "</name" (any case) at or after from, or len(b).
func findCloseTag(b []byte, from int, name string) int {
	for from < len(b) {
		k := bytes.Index(b[from:], []byte("</"))
		if k < 0 {
			return len(b)
		}
		from += k
		if hasPrefixFold(b[from+2:], name) {
			return from
		}
		from += 2
	}
	return len(b)
}

// scanInjection is pipeline steps 3 and 5: it counts injection findings in b.
func scanInjection(b []byte, c *counts) {
	s := injScan{b: b, c: c, scratch: make([]byte, 0, 512), hidFrom: -1, hidTo: -1, covered: make([]int, len(rules))}
	n := len(b)
	for i := 0; i < n; {
		ch := b[i]
		if byteClass[ch] != clAlnum {
			if (ch == '<' || ch == '[') && i >= s.hidTo {
				s.hiddenAt(i)
			}
			i++
			continue
		}
		end := setAlnum.run(b, i)
		if (i == 0 || !isAlnum(b[i-1])) && len(ruleTable[ch]) > 0 {
			s.atWord(i)
		}
		i = end
	}
}

// injectionFound reports whether c holds any injection finding.
func injectionFound(c *counts) bool { return c.any(cInstructionOverride, cTranslateExecute) }

func containsAny(b []byte, words []string) bool {
	for _, w := range words {
		if bytes.Contains(b, []byte(w)) {
			return true
		}
	}
	return false
}
