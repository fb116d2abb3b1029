/**
 * The limits a MongoDB server puts on the shape of an aggregation, checked on a compiled pipeline
 * before it is sent, so that a filter the server would refuse is answered with LIMIT_EXCEEDED and
 * a message naming the limit, not with a driver error. The figures are the server's defaults
 * (MongoDB 7.0): BSONDepth::kDefaultMaxAllowableDepth (200, for the whole command, of which the
 * command's own document and the pipeline array take two), `internalMaxSubPipelineViewDepth`
 * (20 nested `$lookup` pipelines) and `internalPipelineLengthLimit` (1,000 stages in one
 * pipeline). The parser's own limit of 100 nested query documents in a `$match`
 * (MatchExpressionParser::kMaximumTreeDepth) is never reached first: each query level is two BSON
 * levels (an `$and`'s array and its member), so the BSON limit stops a `$match` at about 98. A LIKE
 * regex's length is checked where it is made (like-regex.ts).
 */
import type { Document } from "mongodb";
import { LimitExceededError } from "../../../../common/errors.ts";

export const MAX_PIPELINE_DEPTH = 198;
export const MAX_SUB_PIPELINES = 20;
export const MAX_STAGES = 1000;

/** Nesting depth of a BSON value: a document or an array is one level more than its deepest member. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object" || value instanceof Date) return 0;
  if ((value as { _bsontype?: string })._bsontype) return 0;
  let deepest = 0;
  for (const member of Array.isArray(value) ? value : Object.values(value))
    deepest = Math.max(deepest, depthOf(member));
  return deepest + 1;
}

function tooDeep(message: string): LimitExceededError {
  return new LimitExceededError(
    `this filter cannot be run on MongoDB: ${message}; write it with fewer nested parts`,
  );
}

/** Checks one pipeline and the sub-pipelines of its `$lookup`s, `level` pipelines deep. */
function checkPipeline(pipeline: readonly Document[], level: number): void {
  if (pipeline.length > MAX_STAGES)
    throw tooDeep(
      `it needs ${pipeline.length} stages in one pipeline, and the server runs at most ${MAX_STAGES}`,
    );
  for (const stage of pipeline) {
    const inner = (stage.$lookup as { pipeline?: Document[] } | undefined)?.pipeline;
    if (inner) {
      if (level + 1 > MAX_SUB_PIPELINES)
        throw tooDeep(`it nests more than ${MAX_SUB_PIPELINES} sub-queries and lookups, the server's limit`);
      checkPipeline(inner, level + 1);
    }
  }
}

/**
 * Returns `pipeline` when the server will take its shape.
 * @throws LimitExceededError naming the limit it passes.
 */
export function withinServerLimits(pipeline: Document[]): Document[] {
  checkPipeline(pipeline, 0);
  const depth = depthOf(pipeline);
  if (depth > MAX_PIPELINE_DEPTH)
    throw tooDeep(
      `it compiles to a command nested ${depth + 1} levels deep, and the server reads at most ${MAX_PIPELINE_DEPTH + 1}`,
    );
  return pipeline;
}
