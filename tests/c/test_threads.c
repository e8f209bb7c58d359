/* Threads: one lg_stream_config shared read-only by every thread; each thread owns its guards
 * and a pool; one guard is handed from thread to thread (moving is allowed, sharing is not).
 * Run under ThreadSanitizer by tests/c_abi.rs. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "loopguard.h"

#define THREADS 4

static lg_stream_config shared_config; /* written once before the threads start */
static int failed;

static void *worker(void *arg) {
    int id = (int)(size_t)arg;
    lg_stream *s = NULL;
    if (lg_stream_new(&shared_config, &s) != LG_OK) { failed = 1; return NULL; }
    lg_pool *p = NULL;
    if (lg_pool_new(&shared_config, 8, &p) != LG_OK) { failed = 1; return NULL; }
    uint64_t slots[8];
    for (int i = 0; i < 8; i++) lg_pool_add(p, &slots[i]);
    int halted = 0;
    for (int round = 0; round < 50; round++) {
        lg_stream_reset(s);
        for (int i = 0; i < 400; i++) {
            lg_action a;
            lg_stream_push_token(s, (uint32_t)(id * 100 + i % (3 + round % 9)), NULL, 0, &a);
            if (a == LG_ACTION_HALT) { halted++; break; }
        }
        uint32_t tokens[8];
        uint8_t actions[8];
        for (int i = 0; i < 64; i++) {
            for (int k = 0; k < 8; k++) tokens[k] = (uint32_t)(k * 1000 + i % (k + 2));
            lg_pool_push(p, slots, tokens, 8, actions);
        }
        for (int k = 0; k < 8; k++) lg_pool_reset(p, slots[k]);
    }
    lg_pool_free(p);
    lg_stream_free(s);
    if (halted != 50) { fprintf(stderr, "thread %d halted %d of 50 rounds\n", id, halted); failed = 1; }
    return NULL;
}

/* A guard moved between threads: each thread pushes, then hands it over by joining. */
static lg_stream *moved;
static void *push_some(void *arg) {
    uint32_t base = (uint32_t)(size_t)arg * 1000u; /* fresh tokens: no thread repeats another */
    for (uint32_t i = 0; i < 1000; i++) lg_stream_push_token(moved, base + i, NULL, 0, NULL);
    return NULL;
}

int main(void) {
    if (lg_stream_config_init(&shared_config) != LG_OK) return 1;
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)(size_t)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    if (lg_stream_new(&shared_config, &moved) != LG_OK) return 1;
    for (int i = 0; i < THREADS; i++) {
        pthread_t u;
        pthread_create(&u, NULL, push_some, (void *)(size_t)i);
        pthread_join(u, NULL);
    }
    lg_stats st;
    st.struct_size = sizeof st;
    lg_stream_stats(moved, &st);
    if (st.symbols != 1000 * THREADS) { fprintf(stderr, "moved guard saw %llu symbols\n", (unsigned long long)st.symbols); failed = 1; }
    lg_stream_free(moved);
    if (failed) {
        fprintf(stderr, "test_threads: failed\n");
        return 1;
    }
    printf("test_threads: all checks passed\n");
    return 0;
}
