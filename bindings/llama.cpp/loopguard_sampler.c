/* loopguard's stream guard as a llama.cpp sampler: see loopguard_sampler.h. */
#define _POSIX_C_SOURCE 199309L
#include "loopguard_sampler.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Most pieces fit; a longer one is read into a buffer grown once. */
#define PIECE_BYTES 256
/* Tokens of a reasoning end marker (at most 64 bytes) the sampler can force. */
#define MARKER_TOKENS 64

struct lg_llama_ctx {
    lg_stream *stream;
    const struct llama_vocab *vocab;
    llama_token end;     /* the token forced once halted */
    int halted;
    lg_status status;
    uint64_t tokens;
    uint64_t piece_ns;   /* in llama_token_to_piece */
    uint64_t push_ns;    /* in the guard */
    char piece[PIECE_BYTES];
    char *big;           /* for pieces over PIECE_BYTES */
    size_t big_len;
    /* The reasoning end marker (from the config) and, while it is being forced after
     * LG_ACTION_END_REASONING, its tokens and the next one to force. */
    char marker[65];
    size_t marker_len;
    llama_token force[MARKER_TOKENS];
    int n_force;
    int next_force; /* -1 when not forcing */
    uint64_t ends;  /* reasoning sections ended */
};

static _Thread_local char last_error[256];

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static const char *lg_name(const struct llama_sampler *smpl) {
    (void)smpl;
    return "loopguard";
}

static void lg_accept(struct llama_sampler *smpl, llama_token token) {
    struct lg_llama_ctx *c = (struct lg_llama_ctx *)smpl->ctx;
    if (c->halted) return;
    uint64_t start = now_ns();
    /* special = false: control tokens have no text in the output. The tokens of a forced
     * reasoning end marker are rendered with it, so that the guard reads the marker even when
     * the vocabulary holds it as a control token. */
    const bool special = c->next_force >= 0;
    int32_t n = llama_token_to_piece(c->vocab, token, c->piece, PIECE_BYTES, 0, special);
    const char *piece = c->piece;
    if (n < 0) {
        size_t need = (size_t)-n;
        if (need > c->big_len) {
            char *grown = (char *)realloc(c->big, need);
            if (grown) {
                c->big = grown;
                c->big_len = need;
            }
        }
        n = need <= c->big_len
                ? llama_token_to_piece(c->vocab, token, c->big, (int32_t)c->big_len, 0, special)
                : 0; /* out of memory: push the id alone */
        piece = c->big;
        if (n < 0) n = 0;
    }
    lg_action action = LG_ACTION_CONTINUE;
    uint64_t mid = now_ns();
    lg_status status = lg_stream_push_token(c->stream, (uint32_t)token, (const uint8_t *)piece,
                                            (size_t)n, &action);
    c->tokens++;
    if (status != LG_OK) {
        c->status = status;
        c->halted = 1;
    } else if (action == LG_ACTION_HALT) {
        c->halted = 1;
    } else if (c->next_force >= 0) {
        /* A marker token went in; once all have, the guard must have read the marker. */
        if (++c->next_force == c->n_force) {
            c->next_force = -1;
            if (action == LG_ACTION_END_REASONING) c->halted = 1; /* it did not: stop */
        }
    } else if (action == LG_ACTION_END_REASONING) {
        /* Force the marker, token by token, from the next sample on. A marker that does not
         * tokenize into a few tokens cannot be forced: stop as a halt would. */
        int n = llama_tokenize(c->vocab, c->marker, (int32_t)c->marker_len, c->force,
                               MARKER_TOKENS, false, true);
        if (n > 0) {
            c->n_force = n;
            c->next_force = 0;
            c->ends++;
        } else {
            c->halted = 1;
        }
    }
    c->piece_ns += mid - start;
    c->push_ns += now_ns() - mid;
}

static void lg_apply(struct llama_sampler *smpl, llama_token_data_array *cur_p) {
    struct lg_llama_ctx *c = (struct lg_llama_ctx *)smpl->ctx;
    if ((!c->halted && c->next_force < 0) || cur_p->size == 0) return;
    cur_p->data[0].id = c->halted ? c->end : c->force[c->next_force];
    cur_p->data[0].logit = 0.0f;
    cur_p->data[0].p = 1.0f;
    cur_p->size = 1;
    cur_p->selected = 0;
    cur_p->sorted = true;
}

static void lg_reset(struct llama_sampler *smpl) {
    struct lg_llama_ctx *c = (struct lg_llama_ctx *)smpl->ctx;
    lg_status status = lg_stream_reset(c->stream);
    c->halted = status != LG_OK;
    c->status = status;
    c->tokens = 0;
    c->piece_ns = 0;
    c->push_ns = 0;
    c->next_force = -1;
    c->ends = 0;
}

static struct llama_sampler *wrap(lg_stream *stream, const struct llama_vocab *vocab,
                                  const char *marker, size_t marker_len);

static struct llama_sampler *lg_clone(const struct llama_sampler *smpl) {
    const struct lg_llama_ctx *c = (const struct lg_llama_ctx *)smpl->ctx;
    lg_stream *copy = NULL;
    if (lg_stream_clone(c->stream, &copy) != LG_OK) return NULL;
    struct llama_sampler *s = wrap(copy, c->vocab, c->marker, c->marker_len);
    if (!s) return NULL;
    struct lg_llama_ctx *d = (struct lg_llama_ctx *)s->ctx;
    memcpy(d->force, c->force, sizeof d->force);
    d->n_force = c->n_force;
    d->next_force = c->next_force;
    d->ends = c->ends;
    d->halted = c->halted;
    d->status = c->status;
    d->tokens = c->tokens;
    d->piece_ns = c->piece_ns;
    d->push_ns = c->push_ns;
    return s;
}

static void lg_free(struct llama_sampler *smpl) {
    struct lg_llama_ctx *c = (struct lg_llama_ctx *)smpl->ctx;
    lg_stream_free(c->stream);
    free(c->big);
    free(c);
}

static struct llama_sampler_i lg_iface = {
    .name = lg_name,
    .accept = lg_accept,
    .apply = lg_apply,
    .reset = lg_reset,
    .clone = lg_clone,
    .free = lg_free,
};

/* Takes ownership of `stream` (freed on failure). `marker` is the reasoning end marker
 * (at most 64 bytes, validated by lg_stream_new), or empty. */
static struct llama_sampler *wrap(lg_stream *stream, const struct llama_vocab *vocab,
                                  const char *marker, size_t marker_len) {
    struct lg_llama_ctx *c = (struct lg_llama_ctx *)calloc(1, sizeof *c);
    if (!c) {
        lg_stream_free(stream);
        snprintf(last_error, sizeof last_error, "out of memory");
        return NULL;
    }
    c->stream = stream;
    c->vocab = vocab;
    c->end = llama_vocab_eos(vocab);
    if (c->end == LLAMA_TOKEN_NULL) c->end = llama_vocab_eot(vocab);
    c->status = LG_OK;
    if (marker_len > 0 && marker_len < sizeof c->marker) {
        memcpy(c->marker, marker, marker_len);
        c->marker_len = marker_len;
    }
    c->next_force = -1;
    return llama_sampler_init(&lg_iface, c);
}

struct llama_sampler *lg_llama_sampler_new(const struct llama_vocab *vocab,
                                           const lg_stream_config *config) {
    if (!vocab) {
        snprintf(last_error, sizeof last_error, "lg_llama_sampler_new: vocab is NULL");
        return NULL;
    }
    lg_stream_config defaults;
    if (!config) {
        lg_stream_config_init(&defaults);
        config = &defaults;
    }
    lg_stream *stream = NULL;
    lg_status status = lg_stream_new(config, &stream);
    if (status != LG_OK) {
        char why[200] = "";
        lg_stream_config_validate(config, why, sizeof why);
        snprintf(last_error, sizeof last_error, "lg_llama_sampler_new: %s%s%s",
                 lg_status_str(status), why[0] ? ": " : "", why);
        return NULL;
    }
    /* A config from an older header has no marker field: read it only when it is there. */
    int has_marker = config->struct_size >= offsetof(lg_stream_config, reasoning_end) + sizeof(lg_str);
    return wrap(stream, vocab, has_marker ? config->reasoning_end.ptr : NULL,
                has_marker ? config->reasoning_end.len : 0);
}

static const struct lg_llama_ctx *ours(const struct llama_sampler *smpl) {
    return smpl && smpl->iface == &lg_iface ? (const struct lg_llama_ctx *)smpl->ctx : NULL;
}

const lg_stream *lg_llama_sampler_stream(const struct llama_sampler *smpl) {
    const struct lg_llama_ctx *c = ours(smpl);
    return c ? c->stream : NULL;
}

int lg_llama_sampler_halted(const struct llama_sampler *smpl) {
    const struct lg_llama_ctx *c = ours(smpl);
    return c ? c->halted : 0;
}

lg_status lg_llama_sampler_status(const struct llama_sampler *smpl) {
    const struct lg_llama_ctx *c = ours(smpl);
    return c ? c->status : LG_ERR_NULL;
}

void lg_llama_sampler_timing(const struct llama_sampler *smpl, uint64_t *out_tokens,
                             uint64_t *out_piece_ns, uint64_t *out_push_ns) {
    const struct lg_llama_ctx *c = ours(smpl);
    if (out_tokens) *out_tokens = c ? c->tokens : 0;
    if (out_piece_ns) *out_piece_ns = c ? c->piece_ns : 0;
    if (out_push_ns) *out_push_ns = c ? c->push_ns : 0;
}

uint64_t lg_llama_sampler_reasoning_ends(const struct llama_sampler *smpl) {
    const struct lg_llama_ctx *c = ours(smpl);
    return c ? c->ends : 0;
}

const char *lg_llama_sampler_last_error(void) {
    return last_error;
}
