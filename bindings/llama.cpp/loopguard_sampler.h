/* A llama.cpp sampler that stops a looping generation: loopguard's stream guard behind
 * llama.cpp's `struct llama_sampler_i`.
 *
 *   struct llama_sampler *chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
 *   llama_sampler_chain_add(chain, llama_sampler_init_greedy());
 *   struct llama_sampler *guard = lg_llama_sampler_new(vocab, NULL);   // balanced preset
 *   llama_sampler_chain_add(chain, guard);                              // the chain owns it
 *   ... llama_sampler_sample(chain, ctx, -1) returns the end-of-generation token once the
 *   guard has halted; lg_llama_sampler_stream(guard) says why.
 *
 * `accept` pushes each chosen token, with its text piece, into the guard. Once the guard has
 * halted (or failed), `apply` leaves a single candidate, the vocabulary's end-of-generation
 * token, so whatever sampler picks next picks it and the server's usual end-of-generation path
 * stops the sequence. `reset`, `clone` and `free` map onto the guard's. Add it anywhere in the
 * chain; after the final sampler it overrides that sampler's choice.
 *
 * Reasoning models: with `config->reasoning_end` set (say "</think>"), a loop inside the
 * reasoning answers LG_ACTION_END_REASONING, and `apply` then forces the marker's tokens one
 * after the other instead of ending the generation; the guard reads them, forgets the
 * thinking's loops and watches the answer (a loop there halts as usual).
 *
 * Thread safety: as any llama.cpp sampler, one sequence's, not for concurrent use. */
#ifndef LOOPGUARD_SAMPLER_H
#define LOOPGUARD_SAMPLER_H

#include <stdint.h>

#include "llama.h"
#include "loopguard.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates the sampler for `vocab` (not owned; it must outlive the sampler) with `config`
 * (copied; NULL for the balanced preset). Returns NULL when `vocab` is NULL, the config is
 * invalid or memory runs out; `lg_llama_sampler_last_error()` then says why. */
struct llama_sampler *lg_llama_sampler_new(const struct llama_vocab *vocab,
                                           const lg_stream_config *config);

/* The guard inside a loopguard sampler (for its verdict, repeated text, description and
 * stats), or NULL when `smpl` is NULL or not a loopguard sampler. Valid until the sampler is
 * freed; do not free it. */
const lg_stream *lg_llama_sampler_stream(const struct llama_sampler *smpl);

/* 1 once the guard has halted or failed (the sampler is forcing end of generation), else 0. */
int lg_llama_sampler_halted(const struct llama_sampler *smpl);

/* `LG_OK`, or the status of the guard call that failed; a failure stops generation the same
 * way a halt does, and `lg_stream_last_error(lg_llama_sampler_stream(smpl))` says why. */
lg_status lg_llama_sampler_status(const struct llama_sampler *smpl);

/* Tokens accepted since creation or the last reset, and the nanoseconds `accept` spent turning
 * them into text pieces (llama_token_to_piece) and in the guard (lg_stream_push_token). Each
 * out-pointer may be NULL; all are 0 for a sampler that is not loopguard's. */
void lg_llama_sampler_timing(const struct llama_sampler *smpl, uint64_t *out_tokens,
                             uint64_t *out_piece_ns, uint64_t *out_push_ns);

/* Reasoning sections the sampler ended by forcing the end marker (0 for another sampler). */
uint64_t lg_llama_sampler_reasoning_ends(const struct llama_sampler *smpl);

/* Why the last `lg_llama_sampler_new` on this thread returned NULL (never NULL itself). */
const char *lg_llama_sampler_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
