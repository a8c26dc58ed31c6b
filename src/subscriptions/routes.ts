/**
 * /Subscriptions: webhooks (issue 25, "Subscribers hear it"). A subscription names an https URL and the
 * outbox events it wants; each matching event becomes one delivery, sent through the WEBHOOKS queue,
 * signed as Standard Webhooks specifies, retried with backoff, and listed with its last answer.
 */
import { z } from "@hono/zod-openapi";
import { newApp } from "../app-factory";
import { writeContext } from "../pkg/db";
import { jsonWithEtag } from "../pkg/etag";
import { answerHoldsSecrets } from "../pkg/idempotency";
import { defineRoute, IdParam, IfMatchHeader, json, jsonBody, notModified, withTotalCount, answerPage } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import { EVENT_KINDS, eventType } from "./catalogue";
import { getDelivery, listDeliveries, redeliver } from "./deliveries";
import {
  CreateSubscriptionSchema,
  DeliveryDetailSchema,
  DeliveryListQuery,
  DeliverySchema,
  EventTypeSchema,
  SubscriptionListQuery,
  SubscriptionSchema,
  SubscriptionWithSecretSchema,
  UpdateSubscriptionSchema,
} from "./schema";
import { createSubscription, deleteSubscription, getSubscription, listSubscriptions, rotateSecret, updateSubscription } from "./store";

const tags = ["Subscriptions"];
const read = { permission: PERMISSIONS.subscriptionsRead, area: "platform" } as const;
const write = { permission: PERMISSIONS.subscriptionsWrite, area: "platform" } as const;

const DELIVERY =
  "Each matching event is POSTed as JSON (`{ type, timestamp, data }`) with the Standard Webhooks headers `webhook-id` (the event id: " +
  "deduplicate on it, delivery is at least once), `webhook-timestamp` and `webhook-signature` (v1, HMAC-SHA256 " +
  "with the subscription's secret). " +
  "A 2xx answer within 15 seconds is a success; anything else is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h " +
  "and 10 h, then dead-lettered. " +
  'Three days of only failures, or a 410 Gone, disable the subscription with its reason (README, "Webhooks").';

const DeliveryParams = IdParam.extend({
  deliveryId: z.uuid().openapi({ param: { name: "deliveryId", in: "path" }, example: "5f0c2b7e-3d1a-4e8b-9c6f-7a2d1e0b3c4d" }),
});

export function subscriptionsApp() {
  const app = newApp();

  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Subscriptions",
      tags,
      summary: "List webhook subscriptions (newest first)",
      request: { query: SubscriptionListQuery },
      responses: {
        200: withTotalCount(json(z.array(SubscriptionSchema), "One page of subscriptions (never their secrets).")),
      },
    }),
    async (c) => answerPage(c, await listSubscriptions(c.env.DB, c.req.valid("query"))),
  );

  // Before /Subscriptions/{id}, so `EventTypes` is never read as an id.
  app.openapi(
    defineRoute(read, {
      method: "get",
      path: "/Subscriptions/EventTypes",
      operationId: "listSubscriptionEventTypes",
      tags,
      summary: "The events a subscription can ask for: entity kinds, their actions, and the permission each needs",
      responses: { 200: json(z.array(EventTypeSchema), "Every entity kind with events, by name.") },
    }),
    (c) =>
      c.json(
        Object.entries(EVENT_KINDS)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([entityKind, kind]) => ({
            entityKind,
            actions: [...kind.actions],
            eventTypes: kind.actions.map((action) => eventType(entityKind, action)),
            permission: kind.permission,
            description: kind.description,
          })),
        200,
      ),
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Subscriptions/{id}",
        tags,
        summary: "Get a webhook subscription (never its secret)",
        request: { params: IdParam },
        responses: { 200: json(SubscriptionSchema, "The subscription, with its ETag."), ...notModified },
      },
    ),
    async (c) => {
      const found = await getSubscription(c.env.DB, c.req.valid("param").id);
      return jsonWithEtag(c, found.value, found.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [501] },
      {
        method: "post",
        path: "/Subscriptions",
        tags,
        summary: "Subscribe a URL to events; the answer shows the signing secret, once",
        description:
          `${DELIVERY} Subscribing to a kind's events needs the permission that reads that kind (GET ` + `/Subscriptions/EventTypes).`,
        request: jsonBody(CreateSubscriptionSchema),
        responses: { 201: json(SubscriptionWithSecretSchema, "The subscription and its secret (shown only now).") },
      },
    ),
    async (c) => {
      answerHoldsSecrets(c);
      const created = await createSubscription(writeContext(c), c.env, c.get("principal"), c.req.valid("json"));
      c.header("location", `/Subscriptions/${created.subscription.value.id}`);
      return jsonWithEtag(c, { ...created.subscription.value, secret: created.secret }, created.subscription.etag, 201);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 412] },
      {
        method: "put",
        path: "/Subscriptions",
        tags,
        summary: "Replace a webhook subscription (the id is in the body); enabled true re-enables a disabled one",
        description:
          "Send the subscription back as read, changed. The secret is not part of it: rotate it with POST " +
          "/Subscriptions/{id}/SecretRotation.",
        request: { headers: IfMatchHeader, ...jsonBody(UpdateSubscriptionSchema) },
        responses: { 200: json(SubscriptionSchema, "The updated subscription.") },
      },
    ),
    async (c) => {
      const updated = await updateSubscription(writeContext(c), c.env, c.get("principal"), c.req.valid("json"));
      return jsonWithEtag(c, updated.value, updated.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 412] },
      {
        method: "delete",
        path: "/Subscriptions/{id}",
        tags,
        summary: "Delete a webhook subscription and its deliveries",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 204: { description: "Deleted." } },
      },
    ),
    async (c) => {
      await deleteSubscription(writeContext(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404, 412, 501] },
      {
        method: "post",
        path: "/Subscriptions/{id}/SecretRotation",
        operationId: "rotateSubscriptionSecret",
        tags,
        summary: "Replace the signing secret; the answer shows the new one, once",
        description:
          "Every attempt from now on, retries of earlier deliveries included, is signed with the new secret only: " +
          "signatures made with the old one no longer verify.",
        request: { params: IdParam, headers: IfMatchHeader },
        responses: { 200: json(SubscriptionWithSecretSchema, "The subscription and its new secret (shown only now).") },
      },
    ),
    async (c) => {
      answerHoldsSecrets(c);
      const rotated = await rotateSecret(writeContext(c), c.env, c.req.valid("param").id);
      return jsonWithEtag(c, { ...rotated.subscription.value, secret: rotated.secret }, rotated.subscription.etag);
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Subscriptions/{id}/Deliveries",
        operationId: "listSubscriptionDeliveries",
        tags,
        summary: "The deliveries of a subscription (newest first): status, attempts, last answer",
        request: { params: IdParam, query: DeliveryListQuery },
        responses: { 200: withTotalCount(json(z.array(DeliverySchema), "One page of deliveries.")) },
      },
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      await getSubscription(c.env.DB, id);
      return answerPage(c, await listDeliveries(c.env.DB, id, c.req.valid("query")));
    },
  );

  app.openapi(
    defineRoute(
      { ...read, errors: [404] },
      {
        method: "get",
        path: "/Subscriptions/{id}/Deliveries/{deliveryId}",
        operationId: "getSubscriptionDelivery",
        tags,
        summary: "One delivery, with the body it sends",
        request: { params: DeliveryParams },
        responses: { 200: json(DeliveryDetailSchema, "The delivery.") },
      },
    ),
    async (c) => {
      const { id, deliveryId } = c.req.valid("param");
      return c.json(await getDelivery(c.env.DB, id, deliveryId), 200);
    },
  );

  app.openapi(
    defineRoute(
      { ...write, errors: [404] },
      {
        method: "post",
        path: "/Subscriptions/{id}/Deliveries/{deliveryId}/Redelivery",
        operationId: "redeliverSubscriptionDelivery",
        tags,
        summary: "Send one delivery again now (same body and webhook-id, new signature), with a fresh retry schedule",
        description: "Any delivery can be sent again, succeeded or dead-lettered. 409 while the subscription is disabled.",
        request: { params: DeliveryParams },
        responses: { 202: json(DeliverySchema, "The delivery, pending again.") },
      },
    ),
    async (c) => {
      const { id, deliveryId } = c.req.valid("param");
      return c.json(await redeliver(c.env, id, deliveryId, c.get("clock").now().toISOString()), 202);
    },
  );

  return app;
}
