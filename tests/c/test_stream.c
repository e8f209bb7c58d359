/* The C ABI from C: every function, NULL and misuse, callbacks, the pool. Run plainly, under
 * ASan+UBSan and under valgrind by tests/c_abi.rs. Exits non-zero on the first failure. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loopguard.h"

static int failures = 0;
#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
            failures++;                                                                 \
        }                                                                               \
    } while (0)
#define OK(call) CHECK((call) == LG_OK)

static const char *SENTENCE[] = {"The", " same", " sentence", " comes", " back", " again", ".", " "};
#define SENTENCE_LEN 8

/* Pushes the looping sentence until the guard halts; returns the token index of the halt. */
static int push_until_halt(lg_stream *s, int max_tokens) {
    for (int i = 0; i < max_tokens; i++) {
        const char *piece = SENTENCE[i % SENTENCE_LEN];
        lg_action action = LG_ACTION_CONTINUE;
        OK(lg_stream_push_token(s, 1000u + (uint32_t)(i % SENTENCE_LEN), (const uint8_t *)piece,
                                strlen(piece), &action));
        if (action == LG_ACTION_HALT) return i;
    }
    return -1;
}

static void test_version_and_status(void) {
    CHECK(lg_version_number() == LG_VERSION_MAJOR * 10000 + LG_VERSION_MINOR * 100 + LG_VERSION_PATCH);
    CHECK(lg_version_string() != NULL && strlen(lg_version_string()) >= 5);
    CHECK(strcmp(lg_status_str(LG_OK), "ok") == 0);
    CHECK(lg_status_str(-1) != NULL && lg_status_str(1000) != NULL);
    CHECK(strcmp(lg_status_str(12345), "unknown status") == 0);
}

static void test_config(void) {
    lg_stream_config c;
    OK(lg_stream_config_init(&c));
    CHECK(c.struct_size == sizeof(lg_stream_config));
    CHECK(c.max_period == 256 && c.halt_copies == 3);
    OK(lg_stream_config_preset(&c, LG_PRESET_STRICT));
    CHECK(lg_stream_config_preset(&c, 99) == LG_ERR_INVALID_ARGUMENT);
    CHECK(lg_stream_config_init(NULL) == LG_ERR_NULL);
    char msg[128];
    OK(lg_stream_config_validate(&c, msg, sizeof msg));
    c.max_period = 5000;
    CHECK(lg_stream_config_validate(&c, msg, sizeof msg) == LG_ERR_CONFIG);
    CHECK(strstr(msg, "max_period") != NULL && strstr(msg, "1..=4096") != NULL);
    char tiny[8];
    CHECK(lg_stream_config_validate(&c, tiny, sizeof tiny) == LG_ERR_CONFIG);
    CHECK(strlen(tiny) == 7); /* truncated, NUL-terminated */
    CHECK(lg_stream_config_validate(&c, NULL, 5) == LG_ERR_NULL);
    CHECK(lg_stream_config_validate(&c, tiny, (size_t)-1) == LG_ERR_INVALID_ARGUMENT);
    lg_stream *s = NULL;
    CHECK(lg_stream_new(&c, &s) == LG_ERR_CONFIG && s == NULL);
    OK(lg_stream_config_vllm(&c, 1, 64, 3));
    OK(lg_stream_new(&c, &s));
    lg_stream_free(s);
    /* A config from an older header: only the first fields known, the rest defaulted. */
    lg_stream_config old;
    OK(lg_stream_config_init(&old));
    old.struct_size = offsetof(lg_stream_config, warn_copies);
    old.halt_copies = 4;
    OK(lg_stream_new(&old, &s));
    lg_stream_free(s);
    old.struct_size = 2; /* smaller than struct_size itself */
    CHECK(lg_stream_new(&old, &s) == LG_ERR_INVALID_ARGUMENT);
    /* Patterns: exempt the asked-for repetition. */
    lg_str exempt[1] = {{"same sentence", 13}};
    OK(lg_stream_config_init(&c));
    c.exempt = exempt;
    c.exempt_len = 1;
    OK(lg_stream_new(&c, &s));
    CHECK(push_until_halt(s, 200) == -1);
    lg_stream_free(s);
    c.exempt = NULL; /* NULL with a length is an error */
    CHECK(lg_stream_new(&c, &s) == LG_ERR_CONFIG);
}

static void test_stream(void) {
    lg_stream_config c;
    OK(lg_stream_config_init(&c));
    lg_stream *s = NULL;
    OK(lg_stream_new(&c, &s));
    size_t mem = 0;
    OK(lg_stream_memory_usage(s, &mem));
    CHECK(mem > 0 && mem <= 16 * 1024);
    int at = push_until_halt(s, 500);
    CHECK(at > 0 && at < 60);
    lg_verdict v;
    memset(&v, 0, sizeof v);
    v.struct_size = sizeof v;
    OK(lg_stream_verdict(s, &v));
    CHECK(v.struct_size == sizeof v);
    CHECK(v.action == LG_ACTION_HALT && v.period == SENTENCE_LEN && v.at == (uint64_t)at);
    CHECK(v.onset_byte != LG_UNKNOWN && v.confidence > 0.5f);
    const uint8_t *text = NULL;
    size_t len = 0;
    OK(lg_stream_repeated_text(s, &text, &len));
    CHECK(len == strlen("The same sentence comes back again. ") - 0 || len > 20);
    char buf[512];
    size_t need = 0;
    OK(lg_stream_describe(s, LG_VERBOSITY_BRIEF, buf, sizeof buf, &need));
    CHECK(strncmp(buf, "halt: exact_loop", 16) == 0 && need == strlen(buf));
    OK(lg_stream_describe(s, LG_VERBOSITY_SUMMARY, buf, sizeof buf, NULL));
    CHECK(strstr(buf, "Halted at symbol") != NULL && strstr(buf, "same sentence") != NULL);
    OK(lg_stream_describe(s, LG_VERBOSITY_FULL, buf, sizeof buf, &need));
    CHECK(strstr(buf, "kind: exact_loop") != NULL && strstr(buf, "\nperiod: 8 tokens") != NULL);
    OK(lg_stream_describe(s, LG_VERBOSITY_FULL, NULL, 0, &need)); /* size query */
    CHECK(need > 50);
    CHECK(lg_stream_describe(s, 7, buf, sizeof buf, &need) == LG_ERR_INVALID_ARGUMENT);
    /* A length no buffer has (a negative length cast to size_t) is refused before a byte is
     * written: under ASan a write here would be a stack-buffer-overflow. */
    char unset_buf[8] = "unset";
    CHECK(lg_stream_describe(s, LG_VERBOSITY_FULL, unset_buf, (size_t)-1, &need) == LG_ERR_INVALID_ARGUMENT);
    CHECK(lg_stream_describe(s, LG_VERBOSITY_FULL, unset_buf, (size_t)PTRDIFF_MAX + 1, &need) == LG_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(unset_buf, "unset") == 0);
    lg_stats st;
    st.struct_size = sizeof st;
    OK(lg_stream_stats(s, &st));
    CHECK(st.halted_at == (uint64_t)at && st.first_warn_at < st.halted_at && st.symbols == (uint64_t)at + 1);
    /* A halt is sticky until reset. */
    lg_action a = LG_ACTION_CONTINUE;
    OK(lg_stream_push_token(s, 1, NULL, 0, &a));
    CHECK(a == LG_ACTION_HALT);
    OK(lg_stream_reset(s));
    OK(lg_stream_push_token(s, 1, NULL, 0, &a));
    CHECK(a == LG_ACTION_CONTINUE);
    /* A clone carries on exactly like the original. */
    OK(lg_stream_reset(s));
    for (int i = 0; i < 12; i++) OK(lg_stream_push_token(s, 1000u + (uint32_t)(i % SENTENCE_LEN), NULL, 0, NULL));
    lg_stream *copy = NULL;
    OK(lg_stream_clone(s, &copy));
    for (int i = 12; i < 80; i++) {
        lg_action x, y;
        uint32_t id = 1000u + (uint32_t)(i % SENTENCE_LEN);
        OK(lg_stream_push_token(s, id, NULL, 0, &x));
        OK(lg_stream_push_token(copy, id, NULL, 0, &y));
        CHECK(x == y);
    }
    lg_stream_free(copy);
    /* Text alone, in arbitrary chunks. */
    OK(lg_stream_reset(s));
    const char *chunk = "the the the the the the the the the the the the the the ";
    for (int i = 0; i < 20; i++) OK(lg_stream_push_text(s, (const uint8_t *)chunk, strlen(chunk), &a));
    CHECK(a == LG_ACTION_HALT);
    OK(lg_stream_finish_text(s, &a));
    /* An older, smaller lg_verdict gets only the fields it knows. */
    struct {
        size_t struct_size;
        uint8_t action, kind, unit;
        uint32_t period;
        uint32_t sentinel;
    } small;
    small.struct_size = offsetof(lg_verdict, repeats);
    small.sentinel = 0xdeadbeef;
    OK(lg_stream_verdict(s, (lg_verdict *)(void *)&small));
    CHECK(small.action == LG_ACTION_HALT && small.sentinel == 0xdeadbeef);
    /* The last failure (the describe with a length over PTRDIFF_MAX) is named. */
    CHECK(strstr(lg_stream_last_error(s), "buf_len = ") != NULL);
    lg_stream_free(s);
}

static void test_null_and_misuse(void) {
    lg_stream_config c;
    OK(lg_stream_config_init(&c));
    lg_action a;
    lg_verdict v;
    v.struct_size = sizeof v;
    CHECK(lg_stream_new(NULL, NULL) == LG_ERR_NULL);
    CHECK(lg_stream_push_token(NULL, 1, NULL, 0, &a) == LG_ERR_NULL);
    CHECK(lg_stream_push_text(NULL, NULL, 0, &a) == LG_ERR_NULL);
    CHECK(lg_stream_verdict(NULL, &v) == LG_ERR_NULL);
    CHECK(lg_stream_reset(NULL) == LG_ERR_NULL);
    CHECK(strlen(lg_stream_last_error(NULL)) > 0);
    lg_stream_free(NULL);
    lg_pool_free(NULL);
    lg_stream *s = NULL;
    OK(lg_stream_new(&c, &s));
    CHECK(lg_stream_push_token(s, 1, NULL, 3, &a) == LG_ERR_NULL); /* NULL piece, non-zero length */
    OK(lg_stream_push_token(s, 1, (const uint8_t *)"", 0, &a));   /* an empty piece */
    OK(lg_stream_push_text(s, NULL, 0, &a));                       /* an empty chunk */
    CHECK(lg_stream_push_text(s, NULL, 1, &a) == LG_ERR_NULL);
    OK(lg_stream_push_token(s, 2, NULL, 0, NULL));                 /* no out_action wanted */
    CHECK(lg_stream_verdict(s, NULL) == LG_ERR_NULL);
    v.struct_size = 0;
    CHECK(lg_stream_verdict(s, &v) == LG_ERR_INVALID_ARGUMENT);
    /* Out-params are untouched on failure. */
    lg_stream *out = (lg_stream *)0x1;
    c.window = 100;
    CHECK(lg_stream_new(&c, &out) == LG_ERR_CONFIG && out == (lg_stream *)0x1);
    const uint8_t junk[] = {0xff, 0xfe, 0xc0, 0x80, 0xe2, 0x94};
    for (uint32_t i = 0; i < 100; i++) OK(lg_stream_push_token(s, 0xffffffffu - i % 3, junk, sizeof junk, &a));
    lg_stream_free(s);
}

static int warn_calls, halt_calls, reentry_status;
static lg_stream *reentry_target;

static void on_warn(void *user, uint64_t slot, const lg_verdict *v) {
    (void)slot;
    CHECK(v->action == LG_ACTION_WARN);
    (*(int *)user)++;
    warn_calls++;
}

static void on_halt(void *user, uint64_t slot, const lg_verdict *v) {
    (void)user;
    (void)slot;
    CHECK(v->action == LG_ACTION_HALT && v->period > 0);
    halt_calls++;
    if (reentry_target) {
        lg_action a;
        reentry_status = (int)lg_stream_push_token(reentry_target, 1, NULL, 0, &a);
        lg_stream_free(reentry_target); /* ignored from inside a callback */
    }
}

static void test_callbacks(void) {
    lg_stream_config c;
    OK(lg_stream_config_init(&c));
    lg_stream *s = NULL;
    OK(lg_stream_new(&c, &s));
    int user = 0;
    OK(lg_stream_set_callbacks(s, on_warn, on_halt, &user));
    warn_calls = halt_calls = 0;
    reentry_target = s;
    int at = push_until_halt(s, 500);
    CHECK(at > 0);
    CHECK(warn_calls == 1 && user == 1 && halt_calls == 1);
    CHECK(reentry_status == LG_ERR_REENTRANT);
    reentry_target = NULL;
    lg_action a;
    OK(lg_stream_push_token(s, 1, NULL, 0, &a)); /* still alive, still halted, no new callback */
    CHECK(halt_calls == 1);
    lg_stream_free(s);
}

static uint64_t halted_slot;
static void on_pool_halt(void *user, uint64_t slot, const lg_verdict *v) {
    (void)v;
    (*(int *)user)++;
    halted_slot = slot;
}

static void test_pool(void) {
    lg_stream_config c;
    OK(lg_stream_config_init(&c));
    lg_pool *p = NULL;
    CHECK(lg_pool_new(&c, 0, &p) == LG_ERR_INVALID_ARGUMENT);
    OK(lg_pool_new(&c, 3, &p));
    uint64_t a, b, d, e;
    OK(lg_pool_add(p, &a));
    OK(lg_pool_add(p, &b));
    OK(lg_pool_add(p, &d));
    CHECK(lg_pool_add(p, &e) == LG_ERR_POOL_FULL);
    int halts = 0;
    OK(lg_pool_set_callbacks(p, NULL, on_pool_halt, &halts));
    /* Slot a loops, slot b does not, slot d loops with another period. */
    uint64_t slots[3] = {a, b, d};
    uint32_t tokens[3];
    uint8_t actions[3];
    int a_halt = -1, d_halt = -1;
    for (int i = 0; i < 200; i++) {
        tokens[0] = 10u + (uint32_t)(i % 8);
        tokens[1] = 5000u + (uint32_t)i;
        tokens[2] = 20u + (uint32_t)(i % 13);
        OK(lg_pool_push(p, slots, tokens, 3, actions));
        CHECK(actions[1] == LG_ACTION_CONTINUE);
        if (actions[0] == LG_ACTION_HALT && a_halt < 0) a_halt = i;
        if (actions[2] == LG_ACTION_HALT && d_halt < 0) d_halt = i;
    }
    CHECK(a_halt > 0 && d_halt > 0 && halts == 2);
    lg_verdict v;
    v.struct_size = sizeof v;
    OK(lg_pool_verdict(p, d, &v));
    CHECK(v.action == LG_ACTION_HALT && v.period == 13);
    /* A removed slot's id is refused, and a bad id in a batch pushes nothing. */
    OK(lg_pool_remove(p, a));
    CHECK(lg_pool_remove(p, a) == LG_ERR_NO_SLOT);
    CHECK(lg_pool_verdict(p, a, &v) == LG_ERR_NO_SLOT);
    actions[1] = 77;
    CHECK(lg_pool_push(p, slots, tokens, 3, actions) == LG_ERR_NO_SLOT);
    CHECK(actions[1] == 77);
    CHECK(strlen(lg_pool_last_error(p)) > 0);
    OK(lg_pool_add(p, &e)); /* reuses a's slot under a new id */
    CHECK(e != a);
    OK(lg_pool_reset(p, d));
    OK(lg_pool_verdict(p, d, &v));
    CHECK(v.action == LG_ACTION_CONTINUE);
    CHECK(lg_pool_push(p, NULL, tokens, 1, actions) == LG_ERR_NULL);
    OK(lg_pool_push(p, NULL, NULL, 0, NULL));
    CHECK(lg_pool_push(NULL, slots, tokens, 1, actions) == LG_ERR_NULL);
    lg_pool_free(p);
}

/* The drafted guard `s` answers as the `plain` one fed only the accepted tokens: the same
 * verdict, the action its rollback returned (`a`), the same counts. */
static void check_as_plain(lg_stream *s, lg_stream *plain, lg_action a) {
    lg_verdict v1, v2;
    v1.struct_size = v2.struct_size = sizeof v1;
    OK(lg_stream_verdict(s, &v1));
    OK(lg_stream_verdict(plain, &v2));
    CHECK(v1.action == v2.action && v1.at == v2.at && v1.period == v2.period);
    CHECK(a == v2.action);
    lg_stats t1, t2;
    t1.struct_size = t2.struct_size = sizeof t1;
    OK(lg_stream_stats(s, &t1));
    OK(lg_stream_stats(plain, &t2));
    CHECK(t1.symbols == t2.symbols && t1.bytes == t2.bytes);
}

/* Speculative decoding: drafts pushed after a checkpoint and rolled back leave the guard as
 * one fed only the accepted tokens; the halt comes on the same accepted token. */
static void test_speculative(void) {
    lg_stream_config c;
    OK(lg_stream_config_init(&c));
    lg_stream *s = NULL, *plain = NULL;
    OK(lg_stream_new(&c, &s));
    OK(lg_stream_new(&c, &plain));
    lg_action a = LG_ACTION_CONTINUE;
    CHECK(lg_stream_rollback(s, 1, &a) == LG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(lg_stream_last_error(s), "n: no checkpoint") != NULL);
    int accepted = 0, halted = -1;
    for (int step = 0; step < 100 && halted < 0; step++) {
        OK(lg_stream_checkpoint(s));
        /* Four drafts: the first two right, the others wrong. */
        for (int j = 0; j < 4; j++) {
            int i = accepted + j;
            const char *piece = j < 2 ? SENTENCE[i % SENTENCE_LEN] : " wrong";
            uint32_t id = j < 2 ? 1000u + (uint32_t)(i % SENTENCE_LEN) : 7u;
            OK(lg_stream_push_token(s, id, (const uint8_t *)piece, strlen(piece), &a));
        }
        CHECK(lg_stream_rollback(s, 5, &a) == LG_ERR_INVALID_ARGUMENT);
        CHECK(strstr(lg_stream_last_error(s), "n: 5 pushes asked back, 4 made") != NULL);
        OK(lg_stream_rollback(s, 2, &a));
        OK(lg_stream_commit(s));
        for (int j = 0; j < 2; j++, accepted++) {
            const char *piece = SENTENCE[accepted % SENTENCE_LEN];
            lg_action b = LG_ACTION_CONTINUE;
            OK(lg_stream_push_token(plain, 1000u + (uint32_t)(accepted % SENTENCE_LEN),
                                    (const uint8_t *)piece, strlen(piece), &b));
            if (b == LG_ACTION_HALT && halted < 0) halted = accepted;
        }
        check_as_plain(s, plain, a);
    }
    CHECK(halted > 0 && halted < 60);
    size_t mem = 0;
    OK(lg_stream_memory_usage(s, &mem));
    CHECK(mem > 16 * 1024 && mem < 128 * 1024); /* the checkpoint's copies, journal and log */
    CHECK(lg_stream_checkpoint(NULL) == LG_ERR_NULL);
    CHECK(lg_stream_rollback(NULL, 0, NULL) == LG_ERR_NULL);
    CHECK(lg_stream_commit(NULL) == LG_ERR_NULL);

    /* Steps of 24 drafts, more than the LG_NOTED_PUSHES whose writes are undone one by one:
     * rolled back into the noted ones or past them, the guard still reads as the plain one. */
    CHECK(LG_NOTED_PUSHES == 16 && LG_NOTED_PUSHES < LG_MAX_DRAFTS);
    OK(lg_stream_reset(s));
    OK(lg_stream_reset(plain));
    static const int KEEP[5] = {3, 20, 0, 16, 23};
    accepted = 0;
    for (int step = 0; step < 20; step++) {
        int keep = KEEP[step % 5];
        OK(lg_stream_checkpoint(s));
        for (int j = 0; j < 24; j++) {
            int i = accepted + j;
            const char *piece = j < keep ? SENTENCE[i % SENTENCE_LEN] : " wrong";
            uint32_t id = j < keep ? 1000u + (uint32_t)(i % SENTENCE_LEN) : 7u + (uint32_t)j;
            OK(lg_stream_push_token(s, id, (const uint8_t *)piece, strlen(piece), &a));
        }
        OK(lg_stream_rollback(s, (size_t)(24 - keep), &a));
        OK(lg_stream_commit(s));
        for (int j = 0; j < keep; j++, accepted++) {
            const char *piece = SENTENCE[accepted % SENTENCE_LEN];
            OK(lg_stream_push_token(plain, 1000u + (uint32_t)(accepted % SENTENCE_LEN),
                                    (const uint8_t *)piece, strlen(piece), NULL));
        }
        check_as_plain(s, plain, a);
    }
    lg_stream_free(plain);
    lg_stream_free(s);

    /* The same through a pool slot. */
    lg_pool *p = NULL;
    uint64_t slot = 0;
    OK(lg_pool_new(&c, 4, &p));
    OK(lg_pool_add(p, &slot));
    CHECK(lg_pool_rollback(p, slot, 0, NULL) == LG_ERR_INVALID_ARGUMENT);
    OK(lg_pool_checkpoint(p, slot));
    uint32_t tokens[3] = {5, 6, 7};
    uint64_t slots[3] = {slot, slot, slot};
    uint8_t actions[3];
    OK(lg_pool_push(p, slots, tokens, 3, actions));
    OK(lg_pool_rollback(p, slot, 3, &a));
    CHECK(a == LG_ACTION_CONTINUE);
    OK(lg_pool_commit(p, slot));
    CHECK(lg_pool_rollback(p, slot, 0, NULL) == LG_ERR_INVALID_ARGUMENT);
    CHECK(lg_pool_checkpoint(p, slot + 1) == LG_ERR_NO_SLOT);
    lg_pool_free(p);
}

/* A loop inside the reasoning answers LG_ACTION_END_REASONING where a plain guard halts; the
 * forced marker closes the section. */
static void test_reasoning(void) {
    lg_stream_config c;
    OK(lg_stream_config_init(&c));
    lg_str end = {"</think>", 8};
    c.reasoning_end = end;
    char msg[128];
    OK(lg_stream_config_validate(&c, msg, sizeof msg));
    lg_stream *s = NULL, *plain = NULL;
    OK(lg_stream_new(&c, &s));
    lg_stream_config d;
    OK(lg_stream_config_init(&d));
    OK(lg_stream_new(&d, &plain));
    int halt = push_until_halt(plain, 200);
    CHECK(halt > 0);
    lg_action a = LG_ACTION_CONTINUE;
    int i = 0;
    for (; i < 200 && a != LG_ACTION_END_REASONING; i++) {
        const char *piece = SENTENCE[i % SENTENCE_LEN];
        OK(lg_stream_push_token(s, 1000u + (uint32_t)(i % SENTENCE_LEN), (const uint8_t *)piece,
                                strlen(piece), &a));
        CHECK(a != LG_ACTION_HALT);
    }
    CHECK(a == LG_ACTION_END_REASONING && i - 1 == halt);
    OK(lg_stream_push_token(s, 5, (const uint8_t *)"</think>", 8, &a));
    CHECK(a == LG_ACTION_CONTINUE);
    lg_stream_free(s);
    lg_stream_free(plain);
    /* A start marker without an end one, and a marker too long, are named. */
    lg_str start = {"<think>", 7};
    OK(lg_stream_config_init(&c));
    c.reasoning_start = start;
    CHECK(lg_stream_config_validate(&c, msg, sizeof msg) == LG_ERR_CONFIG);
    CHECK(strstr(msg, "reasoning_end") != NULL);
    lg_str huge = {"x", 100};
    c.reasoning_end = huge;
    CHECK(lg_stream_config_validate(&c, msg, sizeof msg) == LG_ERR_CONFIG);
    CHECK(strstr(msg, "reasoning_end.len = 100") != NULL);
}

/* A model name a per-model profile matches: SmolLM2's shorter halt span halts the sentence
 * loop a copy sooner; an unknown name changes nothing; a name too long is named. */
static void test_model_profile(void) {
    lg_stream_config c;
    OK(lg_stream_config_init(&c));
    lg_stream *plain = NULL, *smol = NULL, *other = NULL;
    OK(lg_stream_new(&c, &plain));
    lg_str smollm2 = {"HuggingFaceTB/SmolLM2-135M-Instruct", 35};
    c.model = smollm2;
    OK(lg_stream_new(&c, &smol));
    lg_str unknown = {"some-model-7b", 13};
    c.model = unknown;
    OK(lg_stream_new(&c, &other));
    int a = push_until_halt(plain, 200), b = push_until_halt(smol, 200), o = push_until_halt(other, 200);
    CHECK(a > 0 && b > 0 && b < a && o == a);
    char long_name[300];
    memset(long_name, 'x', sizeof long_name);
    lg_str too_long = {long_name, sizeof long_name};
    c.model = too_long;
    char msg[128];
    CHECK(lg_stream_config_validate(&c, msg, sizeof msg) == LG_ERR_CONFIG);
    CHECK(strstr(msg, "model.len = 300") != NULL);
    lg_stream_free(plain);
    lg_stream_free(smol);
    lg_stream_free(other);
}

int main(void) {
    test_version_and_status();
    test_config();
    test_stream();
    test_null_and_misuse();
    test_callbacks();
    test_pool();
    test_speculative();
    test_reasoning();
    test_model_profile();
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("test_stream: all checks passed\n");
    return 0;
}
