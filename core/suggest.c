/* The "did you mean" rule (core/suggest.h). */
#include "suggest.h"

#include <string.h>

size_t kf_suggest_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b), d[33][33];
	if (n > 31 || m > 31)
		return 99;
	for (size_t i = 0; i <= n; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	return d[n][m];
}

void kf_suggest_init(struct kf_suggest *s)
{
	s->best = NULL;
	s->d = 3; /* at most two edits away */
}

void kf_suggest_try(struct kf_suggest *s, const char *typed, const char *name)
{
	size_t d = kf_suggest_distance(typed, name);
	if (d < s->d && d * 2 < strlen(name)) {
		s->d = d;
		s->best = name;
	}
}
