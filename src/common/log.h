/* SPDX-License-Identifier: GPL-2.0-only */
/* log.h — the one pr_* family: every diagnostic goes to stderr as "memtrack: ...". */
#ifndef MEMTRACK_LOG_H
#define MEMTRACK_LOG_H

enum mt_log_level { MT_LOG_ERROR, MT_LOG_WARN, MT_LOG_INFO, MT_LOG_DEBUG };

/* Messages above this level are dropped; set once by the CLI (-v raises it). */
extern enum mt_log_level mt_log_max;

void mt_log(enum mt_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_err(...) mt_log(MT_LOG_ERROR, __VA_ARGS__)
#define pr_warn(...) mt_log(MT_LOG_WARN, __VA_ARGS__)
#define pr_info(...) mt_log(MT_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) mt_log(MT_LOG_DEBUG, __VA_ARGS__)

#endif /* MEMTRACK_LOG_H */
