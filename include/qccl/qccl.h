/*
 * qccl: quantized collective communication library.
 *
 * Types and functions mirror NCCL's (same names with the "qccl" prefix, same numeric values),
 * so that a s/nccl/qccl/ port compiles. The header compiles without CUDA.
 */
#ifndef QCCL_QCCL_H_
#define QCCL_QCCL_H_

#include <stddef.h>
#include <stdint.h>

#define QCCL_MAJOR 0
#define QCCL_MINOR 1
#define QCCL_PATCH 0
#define QCCL_VERSION(X, Y, Z) ((X)*10000 + (Y)*100 + (Z))
#define QCCL_VERSION_CODE QCCL_VERSION(QCCL_MAJOR, QCCL_MINOR, QCCL_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* Same declaration as CUDA's, so this header needs no CUDA. A null stream means host memory. */
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;

typedef struct qcclComm* qcclComm_t;

/* Values 0..7 are NCCL's; qccl's own codes follow. */
typedef enum {
  qcclSuccess = 0,
  qcclUnhandledCudaError = 1,
  qcclSystemError = 2,
  qcclInternalError = 3,
  qcclInvalidArgument = 4,
  qcclInvalidUsage = 5,
  qcclRemoteError = 6,
  qcclInProgress = 7,
  qcclTimeout = 8,
  qcclNumResults = 9
} qcclResult_t;

typedef enum {
  qcclInt8 = 0,
  qcclChar = 0,
  qcclUint8 = 1,
  qcclInt32 = 2,
  qcclInt = 2,
  qcclUint32 = 3,
  qcclInt64 = 4,
  qcclUint64 = 5,
  qcclFloat16 = 6,
  qcclHalf = 6,
  qcclFloat32 = 7,
  qcclFloat = 7,
  qcclFloat64 = 8,
  qcclDouble = 8,
  qcclBfloat16 = 9,
  qcclFloat8e4m3 = 10,
  qcclFloat8e5m2 = 11,
  qcclNumTypes = 12
} qcclDataType_t;

typedef enum {
  qcclSum = 0,
  qcclProd = 1,
  qcclMax = 2,
  qcclMin = 3,
  qcclAvg = 4,
  qcclNumOps = 5
} qcclRedOp_t;

/* QCCL_VERSION_CODE of the library actually loaded. */
qcclResult_t qcclGetVersion(int* version);

/* A static string naming the result code. */
const char* qcclGetErrorString(qcclResult_t result);

/* The message of the last error raised by a qccl call on this thread ("" if none). As in NCCL,
 * comm may be NULL. */
const char* qcclGetLastError(qcclComm_t comm);

#ifdef __cplusplus
}
#endif

#endif /* QCCL_QCCL_H_ */
