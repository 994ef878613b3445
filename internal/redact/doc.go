// Package redact removes secrets (API keys, header values, credentials in
// a URL) from the texts a measuring client keeps of what a server sent:
// error bodies, streamed events, redirect targets, record details.
//
// # What is redacted
//
// [Secrets] lists a provider's secrets: the key, its header values, the
// token of an "Authorization: Scheme token" value (and, for Basic, the
// decoded "user:password" and the password), the URL's user info and
// query values. Values shorter than [MinLen] bytes are never searched
// for: they would mangle ordinary text.
//
// A [Set] redacts every run of [MinLen] (8) or more consecutive bytes of
// a secret, wherever it starts (a server that echoes key[3:], or a middle
// slice), in each form a server may echo it in: as given; JSON-escaped,
// percent-escaped or as HTML character references, nested up to three
// layers; hex (in any case, mixed too: any 4 bytes of a secret, 8 hex
// digits); base64 (standard and URL alphabets, at any offset: any 6
// bytes of a secret, 8 base64 characters, and then the whole base64 word
// goes). A text cut inside a secret (at its end, or before the "…" that
// marks a cut) loses the secret's start of 4 bytes or more too.
//
// # Cost
//
// A Set holds every 8-byte window of every form of its secrets in a hash
// table, behind a 65,536-bit filter, and every 4-byte run of them in a
// second 65,536-bit set: scanning a text is one pass, O(len(text)), that
// looks at the 4 bytes at every fifth offset (each 8-byte window holds
// one such run whole) and looks windows up only where that run is one
// of a secret's, or where the text ends in one (a cut); a Wu-Manber
// shift table on 2-byte blocks then skips windows that cannot end
// there. A text without a secret allocates nothing and is returned as
// it is (the same string). The
// escape layers are decoded only when the text holds an escape, into
// pooled buffers. [For] caches a Set per list of secrets, so the hot path
// (every event of a stream) reads it without a lock. BenchmarkRedactEvent
// measures the cost per event.
package redact
