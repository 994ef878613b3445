// Package arrivals schedules the requests of an open loop: it reads a
// trace of arrivals (one offset a line, optionally with the prompt's
// tokens and the answer's cap) and yields the offsets of a run in order,
// replayed from a given list or generated at a rate, Poisson (exponential
// gaps from a seeded PCG) or constant (request i at i/rate).
package arrivals
