import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { listenLocally } from './local-server.ts';

/*
 * An OTLP/HTTP trace receiver in the test's process: what an OpenTelemetry collector does for Lagoon's exporter
 * (@opentelemetry/exporter-trace-otlp-http, JSON encoding), reduced to keeping every span it is sent.
 */

export interface OtlpAttribute {
  readonly key: string;
  readonly value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes?: readonly OtlpAttribute[];
  readonly events?: readonly { name: string; attributes?: readonly OtlpAttribute[] }[];
  readonly status?: { code?: number; message?: string };
  /** The resource attributes of the batch that carried the span (service.name …). */
  readonly resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter posts to /v1/traces below it). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Every request body received, as text (to scan for what must never be exported). */
  readonly bodies: string[];
  close(): Promise<void>;
}

export const attributeOf = (span: ReceivedSpan, key: string): unknown => {
  const value = span.attributes?.find((attribute) => attribute.key === key)?.value;
  if (!value) return undefined;
  return value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
};

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: Omit<ReceivedSpan, 'resource'>[] }[];
  }[];
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let body = Buffer.concat(chunks);
      if (request.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const text = body.toString('utf8');
      bodies.push(text);
      if (request.url !== '/v1/traces' || !String(request.headers['content-type']).includes('json')) {
        response.writeHead(415).end();
        return;
      }
      const parsed = JSON.parse(text) as ExportRequest;
      for (const batch of parsed.resourceSpans ?? []) {
        const resource = Object.fromEntries(
          (batch.resource?.attributes ?? []).map((attribute) => [attribute.key, Object.values(attribute.value)[0]]),
        );
        for (const scope of batch.scopeSpans ?? [])
          for (const span of scope.spans ?? []) spans.push({ ...span, resource });
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const listening = await listenLocally(server);
  return { url: listening.url, spans, bodies, close: listening.close };
}
