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

// rx compiles a pattern whose literal spaces mean sep.
func rx(p string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(p, " ", sep))
}

const (
	neg     = `(?:do not|don't|don’t|dont|never|must not|mustn't|should not|shouldn't|you will not|you won't)`
	aiNoun  = `(?:ai|a\.i\.|llm|large language model|language model|ai assistant|ai agent|coding agent|coding assistant|assistant|agent|model|chatbot|copilot|claude|chatgpt|gpt|gemini|codex|devin|cursor)`
	human   = `(?:user|human|operator|maintainer|owner|requester|developer|reviewer)s?`
	secretN = `(?:secrets?|credentials?|tokens?|environment variables?|env vars?|env variables?|api keys?|ssh keys?|private keys?|passwords?|\$?github_token|\.env(?: files?)?)`
	files   = `(?:~/\.ssh|\.ssh/id_|id_rsa|id_ed25519|id_ecdsa|id_dsa|\.aws/credentials|\.netrc|\.git-credentials|\.docker/config\.json|\.npmrc|\.pypirc|/etc/shadow|\.kube/config|/proc/self/environ|\.config/gh/hosts\.yml|application_default_credentials\.json)`
	sinks   = `(?:\bcurl\b|\bwget\b|\bnc\b|\bncat\b|\bnetcat\b|https?://|webhook)`
)

type family struct {
	code    code
	anchors []string
	res     []*regexp.Regexp
}

var families = []family{
	{cInstructionOverride, []string{"ignor", "disregard", "forget", "overrid", "bypass", "instruction", "directive"}, []*regexp.Regexp{
		rx(`\b(?:ignore|disregard|forget|override|bypass)(?: all| any| each| every| of| the| your| my| these| those)* (?:previous|prior|preceding|above|earlier|original|initial|system|developer|safety|old|former)(?: and [a-z]+)? (?:instructions?|prompts?|directives?|guidelines|guardrails)\b`),
		rx(`\b(?:ignore|disregard|forget) (?:everything|all(?: of it)?|anything) (?:above|before|prior|previously|you (?:were|have been) (?:told|given))\b`),
		rx(`\b(?:(?:do not|don't|don’t|dont|never) (?:follow|obey)|stop (?:following|obeying)) (?:your|the|any) (?:previous|prior|original|system|above|initial) (?:instructions?|prompts?|directives?|guidelines)\b`),
		rx(`\byour (?:new|real|actual|true|updated|only) (?:instructions?|directives?) (?:are|is|:|now|follow)`),
	}},
	{cSystemPrompt, []string{"system"}, []*regexp.Regexp{
		rx(`\b(?:new|updated|real|actual|revised|true|replacement|overriding) system (?:prompt|message|instructions?)(?: is| are| reads| follows|:)`),
		rx(`\b(?:replace|override|overwrite|reset|forget|ignore|disregard) your system (?:prompt|message|instructions?)\b`),
		rx(`\b(?:reveal|print|output|repeat|show|leak|dump) (?:me )?your (?:full |entire |hidden |original )?system (?:prompt|message|instructions?)\b`),
	}},
	{cUnrestrictedRole, []string{"unrestrict", "unfilter", "uncensor", "jailbr", "amoral", "dan", "anything", "longer", "restriction", "mode"}, []*regexp.Regexp{
		rx(`\b(?:you are|you're|act as|acting as|pretend to be|pretend you are|roleplay as|role-play as|behave as|become)(?: now)?(?: an?)? (?:unrestricted|unfiltered|uncensored|jailbroken|unlimited|amoral|unbound|evil|rogue) (?:ai|assistant|model|chatbot|llm|agent|version|mode)\b`),
		rx(`\b(?:enable|activate|enter|switch to|you are (?:now )?in) (?:dan|jailbreak|jailbroken|unrestricted|god|developer) mode\b`),
		rx(`\bdo anything now\b`),
		rx(`\byou(?: are|'re)(?: now)? (?:no longer|not) (?:bound|restricted|limited|constrained) by (?:any|your|the|openai|anthropic)`),
		rx(`\byou (?:have|has) no (?:restrictions|limitations|rules|guidelines|filters|content policy)\b`),
	}},
	{cConcealment, []string{"tell", "inform", "mention", "reveal", "disclos", "alert", "keep", "hide", "notice", "acknowledg"}, []*regexp.Regexp{
		rx(`\b` + neg + ` (?:tell|inform|alert|mention (?:this|it|anything) to|reveal (?:this|it|anything) to|disclose (?:this|it|anything) to) (?:the |your |any )?` + human + ` (?:about|that you|what you|of (?:this|these)|anything)`),
		rx(`\b(?:keep|hide) (?:this|these instructions|it|the following|your actions|what you do) (?:secret |hidden )?from (?:the |your |any )?` + human + `\b`),
		rx(`\b` + neg + ` (?:mention|reveal|disclose|acknowledge) (?:these|this|the above|the following|my) (?:instructions?|message|comment|prompt)\b`),
		rx(`\b(?:so|such) (?:that )?the ` + human + ` (?:does not|doesn't|won't|will not|cannot|can't) (?:notice|know|find out|see)\b`),
	}},
	{cExfiltration, []string{"exfiltrat"}, []*regexp.Regexp{
		rx(`\bexfiltrat[a-z]* .{0,60}?` + secretN),
		rx(secretN + ` .{0,60}?\bexfiltrat`),
	}},
	{cExfiltration, []string{"send", "upload", "post", "transmit", "forward", "email", "leak", "copy", "paste"}, []*regexp.Regexp{
		rx(`\b(?:send|post|upload|transmit|forward|email|leak|copy|paste)(?: me| us)?(?: all| the| your| any| every| of)*(?: contents? of| values? of)?(?: all| the| your| any| every)* ` + secretN + `\b.{0,80}?\b(?:to|into|at|via) (?:https?://|[a-z0-9-]+(?:\.[a-z0-9-]+)+|my |our |an? (?:external|remote|third[- ]party) |the (?:attacker|webhook|following))`),
	}},
	{cExfiltration, []string{"ssh", "id_", "aws/credentials", "netrc", "git-credentials", "config.json", "npmrc", "pypirc", "shadow", "kube/config", "self/environ", "hosts.yml", "application_default"}, []*regexp.Regexp{
		regexp.MustCompile(files + `[^\n]{0,200}` + sinks + `|` + sinks + `[^\n]{0,200}` + files),
		rx(`\b(?:read|cat|print|output|show|display|dump|open|include|paste|post|add|put|write|reveal)(?: the| your)?(?: contents? of| values? of)?(?: the| your| all)* ` + files + `\S* .{0,60}?\b(?:in|into|to) (?:your|the|a) (?:reply|response|comment|answer|pr|pull request|issue|commit|output|review)\b`),
	}},
	{cExfiltration, []string{"secret", "credential", "token", "environment", "env", "api", "passw", "private"}, []*regexp.Regexp{
		rx(`\b(?:read|cat|print|output|show|display|dump|include|paste|post|add|put|write|reveal)(?: the| your)?(?: contents? of| values? of)?(?: the| your| all)* ` + secretN + ` .{0,60}?\b(?:in|into|to) (?:your|the|a) (?:reply|response|comment|answer|pr|pull request|issue|commit|output|review)\b`),
	}},
	{cExfiltration, []string{"printenv", "curl", "wget", "nc", "ncat", "netcat"}, []*regexp.Regexp{
		regexp.MustCompile(`(?:\bprintenv\b|\benv\b|\bset\b|export -p|/proc/self/environ)\s*\|\s*(?:curl|wget|nc|ncat|netcat)\b`),
		regexp.MustCompile(`\b(?:curl|wget)\b[^\n]{0,200}(?:\$\(|\x60)\s*(?:printenv|env)\b`),
		regexp.MustCompile(`\b(?:curl|wget)\b[^\n]{0,200}(?:\s-d|--data[a-z-]*|\s-f|--form|\?[^\s]*=)\s*["']?[^\s]*\$\{?[a-z_]*(?:token|secret|password|_key)\b`),
	}},
	{cTranslateExecute, []string{"translat", "decod", "deciph", "decrypt", "deobfusc", "unscrambl", "revers", "base64", "rot13", "rot-13"}, []*regexp.Regexp{
		rx(`\b(?:translate|decode|decipher|decrypt|deobfuscate|unscramble|reverse|base64[- ]?decode|rot-?13)[a-z]* .{0,120}?(?:and|then|,|;) (?:then )?(?:execute|run|follow|obey|carry out|act on|perform|comply with) (?:it|them|the (?:result|results|resulting|decoded|translated|instructions?|message|payload|output|text)|(?:these|those) instructions|what it says)\b`),
	}},
}

// hiddenRes decide whether hidden HTML content addresses an AI reader.
var hiddenRes = []*regexp.Regexp{
	rx(`\b(?:if|when|since|because) you(?: are|'re|’re) (?:an?|the) ` + aiNoun + `\b`),
	rx(`\b(?:note|message|instructions?|hint|reminder|directive|attention|important) (?:to|for) (?:the |any |all )?` + aiNoun + `s?\b`),
	rx(`(?:^|\n)[\s*#>-]*` + aiNoun + `s?\s*[:,]`),
	rx(`\b(?:dear|hey|hello|hi) ` + aiNoun + `\b`),
}

// anchorTable indexes anchors by their first (lower-case) letter.
type anchor struct {
	word string
	fam  int
}

var anchorTable [256][]anchor

func init() {
	for f, fam := range families {
		for _, w := range fam.anchors {
			anchorTable[w[0]] = append(anchorTable[w[0]], anchor{w, f})
			if w[0] >= 'a' && w[0] <= 'z' {
				anchorTable[w[0]-'a'+'A'] = append(anchorTable[w[0]-'a'+'A'], anchor{w, f})
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
	lastWin []int // per family: window start last evaluated
	lastEnd []int // per family: absolute end of the last counted match
	hidden  int   // hidden regions are inspected up to here
}

func (s *injScan) lower(w []byte) []byte {
	s.scratch = s.scratch[:0]
	for _, c := range w {
		if isUpper(c) {
			c += 'a' - 'A'
		}
		s.scratch = append(s.scratch, c)
	}
	return s.scratch
}

// window returns the start of p's line and the end of the following line, capped.
func (s *injScan) window(p int) (int, int) {
	b := s.b
	lo := max(0, p-512)
	ws := lo
	if k := bytes.LastIndexByte(b[lo:p], '\n'); k >= 0 {
		ws = lo + k + 1
	}
	hi := min(len(b), p+768)
	we := hi
	if k := bytes.IndexByte(b[p:hi], '\n'); k >= 0 {
		if k2 := bytes.IndexByte(b[p+k+1:hi], '\n'); k2 >= 0 {
			we = p + k + 1 + k2
		}
	}
	return ws, we
}

func (s *injScan) evalFamily(f, p int) {
	ws, we := s.window(p)
	if s.lastWin[f] == ws {
		return
	}
	s.lastWin[f] = ws
	w := s.lower(s.b[ws:we])
	for _, re := range families[f].res {
		for _, m := range re.FindAllIndex(w, -1) {
			if ws+m[0] >= s.lastEnd[f] {
				s.c[families[f].code]++
				s.lastEnd[f] = ws + m[1]
			}
		}
	}
}

var (
	commentOpen  = []byte("<!--")
	commentClose = []byte("-->")
	hiddenAttr   = regexp.MustCompile(`\shidden(?:\s|=|/?>)|display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:[^.0-9]|$)|opacity\s*:\s*0(?:[^.0-9]|$)|(?:^|[^-])color\s*:\s*(?:transparent|white|#fff\b|#ffffff)`)
)

// hiddenAt inspects a hidden region starting at '<' (HTML comment or hidden element) or '['
// (markdown link-reference comment) and counts a hidden-html finding when its content
// addresses an AI reader. It returns the end of the inspected region.
func (s *injScan) hiddenAt(p int) {
	b := s.b
	var content []byte
	end := p + 1
	switch {
	case bytes.HasPrefix(b[p:], commentOpen):
		cs := p + len(commentOpen)
		k := bytes.Index(b[cs:], commentClose)
		if k < 0 {
			end = len(b)
		} else {
			end = cs + k + len(commentClose)
		}
		content = b[cs:min(end, len(b))]
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
		if ne == 0 || ne == len(tag) || !hiddenAttr.Match(s.lower(tag[ne:])) {
			return
		}
		name := string(s.lower(tag[:ne]))
		cs := p + te + 1
		end = findCloseTag(b, cs, name)
		content = b[cs:end]
	case bytes.HasPrefix(b[p:], []byte("[//]: #")) || bytes.HasPrefix(b[p:], []byte("[comment]: #")) || bytes.HasPrefix(b[p:], []byte("[comment]: <>")):
		e := bytes.IndexByte(b[p:], '\n')
		if e < 0 {
			end = len(b)
		} else {
			end = p + e
		}
		content = b[p:end]
	default:
		return
	}
	if end <= s.hidden {
		return
	}
	s.hidden = end
	lc := s.lower(content)
	for _, re := range hiddenRes {
		if re.Match(lc) {
			s.c[cHiddenHTML]++
			return
		}
	}
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
	s := injScan{b: b, c: c, scratch: make([]byte, 0, 2048),
		lastWin: make([]int, len(families)), lastEnd: make([]int, len(families))}
	for f := range s.lastWin {
		s.lastWin[f] = -1
	}
	n := len(b)
	for i := 0; i < n; {
		ch := b[i]
		if byteClass[ch] != clAlnum {
			if ch == '<' || ch == '[' {
				if i >= s.hidden {
					s.hiddenAt(i)
				}
			}
			i++
			continue
		}
		end := setAlnum.run(b, i)
		if i == 0 || !isAlnum(b[i-1]) {
			for _, a := range anchorTable[ch] {
				if hasPrefixFold(b[i:], a.word) {
					s.evalFamily(a.fam, i)
				}
			}
		}
		i = end
	}
}

// injectionFound reports whether c holds any injection finding.
func injectionFound(c *counts) bool { return c.any(cInstructionOverride, cTranslateExecute) }
