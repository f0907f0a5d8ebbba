/* libFuzzer target: a datagram through the worker protocol's decoders (sandbox/common/proto.h). The parent
 * reads HELLO, SETUP_OK/SETUP_ERR, RUNNING and STEP_RESULT from an untrusted worker; the worker's SETUP
 * and STEP decoders are run too. Decoders read setup and result in place, so the bytes are copied into
 * malloc'd (aligned) memory of exactly the datagram's size, as kf_proto_recv leaves them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/common/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t reps[] = {0, 1, 3, KF_MAX_REPS, KF_MAX_REPS + 1};
	struct kf_err err = KF_ERR_INIT;
	enum kf_msg_type type;
	void *buf;

	if (size > KF_PROTO_MSG_MAX)
		return 0;
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (!kf_proto_type(buf, size, &type, &err)) {
		struct kf_proto_hello *h = malloc(sizeof(*h));
		struct kf_proto_setup *s = malloc(sizeof(*s));
		struct kf_proto_status *st = malloc(sizeof(*st));
		struct kf_step *step = malloc(sizeof(*step));
		struct kf_step_result *res = malloc(sizeof(*res));
		if (h && s && st && step && res) {
			kf_proto_hello_decode(buf, size, h, &err);
			kf_proto_status_decode(buf, size, st, &err);
			kf_proto_empty_decode(buf, size, KF_MSG_RUNNING, &err);
			kf_proto_empty_decode(buf, size, KF_MSG_QUIT, &err);
			for (size_t i = 0; i < sizeof(reps) / sizeof(reps[0]); i++)
				kf_proto_result_decode(buf, size, reps[i], res, &err);
			if (!kf_proto_setup_decode(buf, size, s, &err)) {
				/* a step checked against the setup it came with */
				memset(step, 0, sizeof(*step));
				kf_proto_step_check(step, s, &err);
			}
			if (!kf_proto_step_decode(buf, size, step, &err)) {
				memset(s, 0, sizeof(*s));
				kf_proto_step_check(step, s, &err);
			}
		}
		free(h);
		free(s);
		free(st);
		free(step);
		free(res);
	}
	free(buf);
	return 0;
}
