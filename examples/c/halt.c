/* Stop a looping generation: feed each token to a guard, stop when it says halt. */
#include <stdio.h>
#include <string.h>
#include "loopguard.h"

int main(void) {
    lg_stream_config config;
    lg_stream_config_init(&config);                 /* balanced preset; change fields here */
    lg_stream *guard = NULL;
    if (lg_stream_new(&config, &guard) != LG_OK) return 1;
    const char *pieces[] = {" I", " think", " so", "."};  /* a model stuck in a loop */
    for (uint32_t i = 0; i < 1000; i++) {
        const char *p = pieces[i % 4];
        lg_action action;
        lg_stream_push_token(guard, 100 + i % 4, (const uint8_t *)p, strlen(p), &action);
        if (action == LG_ACTION_HALT) {
            char why[256];
            lg_stream_describe(guard, LG_VERBOSITY_SUMMARY, why, sizeof why, NULL);
            printf("stopped after %u tokens: %s\n", i + 1, why);
            break;
        }
    }
    lg_stream_free(guard);
    return 0;
}
