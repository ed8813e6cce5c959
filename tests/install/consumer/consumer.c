/* Encodes and decodes through an installed libqccl; exits 0 when the round trip is close. */
#include <math.h>
#include <qccl/qccl_codec.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  enum { kCount = 1000 };
  float x[kCount], y[kCount];
  for (int i = 0; i < kCount; ++i) x[i] = sinf((float)i);
  qcclCodec_t codec;
  size_t bytes = 0;
  if (qcclCodecParse("fp8e4m3", &codec) != qcclSuccess ||
      qcclCodecEncodedSize(codec, kCount, qcclFloat32, &bytes) != qcclSuccess) {
    fprintf(stderr, "%s\n", qcclGetLastError(NULL));
    return 1;
  }
  unsigned char* chunk = malloc(bytes);
  if (qcclEncode(codec, x, kCount, qcclFloat32, chunk, bytes, NULL, NULL) != qcclSuccess ||
      qcclDecode(codec, chunk, bytes, y, kCount, qcclFloat32, NULL) != qcclSuccess) {
    fprintf(stderr, "%s\n", qcclGetLastError(NULL));
    return 1;
  }
  free(chunk);
  for (int i = 0; i < kCount; ++i) {
    if (fabsf(x[i] - y[i]) > 0.07f * fabsf(x[i]) + 1e-3f) return 1;
  }
  int version = 0;
  qcclGetVersion(&version);
  printf("qccl %d: fp8e4m3 round trip of %d values ok\n", version, kCount);
  return 0;
}
