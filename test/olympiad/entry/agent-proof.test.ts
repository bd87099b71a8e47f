import { createPrivateKey, generateKeyPairSync, sign } from "node:crypto";
import { getBase58Decoder } from "@solana/kit";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../../support/app.js";
import { ENGINES } from "../../support/databases.js";

/**
 * Issue #21 item 7, "an agent id belongs to whoever proves it": the first registrant of an agent id
 * used to own it with no proof (the real agent then got 409). Now an unproven id is a self-asserted
 * label that blocks nobody, and a wallet signature over the id and a single-use server nonce proves
 * it: unique, bound to the signer. Real cryptography: viem accounts (EIP-191) and node:crypto ed25519
 * keys whose public key is the Solana address.
 */

/** An ed25519 key pair as a Solana wallet: base58 address, and a signer of UTF-8 messages (base58 signature). */
function solanaWallet() {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  const b58 = getBase58Decoder();
  return {
    address: b58.decode(raw),
    sign: (message: string) =>
      b58.decode(
        sign(null, Buffer.from(message, "utf8"), createPrivateKey(privateKey.export({ format: "pem", type: "pkcs8" }))),
      ),
  };
}

describe("agent ids: self-asserted labels and proven ids (issue #21 item 7)", () => {
  let t: TestApp;
  let clock = new Date("2030-05-01T10:00:00.000Z");
  beforeAll(async () => {
    t = await testApp("sqlite", { OLYMPIAD_AGENT_CHALLENGE_TTL_SECONDS: "300" });
  });
  afterAll(async () => t?.close());

  const act = (payload: Record<string, unknown>) => t.app.inject({ method: "POST", url: "/api/olympiad", payload });
  const challenge = async (agentId: string) => {
    const r = await act({ action: "agent_challenge", agent_id: agentId });
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as { nonce: string; message: string; expires_at: string; agent_id: string };
  };
  const register = (agentId: string, proof?: Record<string, unknown>, name = "Agent") =>
    act({ action: "register", who: "agent_self", name, agent_id: agentId, ...(proof ? { agent_proof: proof } : {}) });

  it("a squatter's unproven famous-agent blocks nobody; the real agent proves it with EIP-191 and gets it", async () => {
    const squat = await register("famous-agent", undefined, "Squatter");
    expect(squat.statusCode, squat.body).toBe(201);
    // a second unproven registration of the same label is no 409 (before issue #21: 409 agent_id_taken)
    const again = await register("famous-agent", undefined, "Another squatter");
    expect(again.statusCode, again.body).toBe(201);
    expect(squat.json().participant).toMatchObject({
      agent_id: "famous-agent",
      agent_id_source: "self_asserted",
      agent_address: null,
    });

    const real = privateKeyToAccount(generatePrivateKey());
    const c = await challenge("famous-agent");
    expect(c.message).toContain("agent_id: famous-agent");
    expect(c.message).toContain(`nonce: ${c.nonce}`);
    expect(c.message).toContain("service: http://lab.test");
    const proof = {
      nonce: c.nonce,
      chain: "evm",
      address: real.address,
      signature: await real.signMessage({ message: c.message }),
    };
    const proven = await register("famous-agent", proof, "The real one");
    expect(proven.statusCode, proven.body).toBe(201);
    expect(proven.json().participant).toMatchObject({
      agent_id: "famous-agent",
      agent_id_source: "proven",
      agent_address: `evm:${real.address}`,
    });
    const me = await t.app.inject({
      method: "GET",
      url: "/api/olympiad/me",
      headers: { authorization: `Bearer ${proven.json().participant_token}` },
    });
    expect(me.json().participant).toMatchObject({ agent_id_source: "proven" });

    // a replayed nonce is refused (even by the same wallet with the same signature)
    const replay = await register("famous-agent", proof, "Replay");
    expect(replay.statusCode, replay.body).toBe(409);
    expect(replay.json().code).toMatch(/^(agent_challenge_used|agent_id_taken)$/);

    // another address proving the proven id: 409 agent_id_taken
    const other = privateKeyToAccount(generatePrivateKey());
    const c2 = await challenge("famous-agent");
    const second = await register("famous-agent", {
      nonce: c2.nonce,
      chain: "evm",
      address: other.address,
      signature: await other.signMessage({ message: c2.message }),
    });
    expect(second.statusCode, second.body).toBe(409);
    expect(second.json()).toMatchObject({ code: "agent_id_taken", agent_id: "famous-agent" });

    // the squatter still carries the label, shown as self-asserted
    const rows = await t.app.services.db.kysely
      .selectFrom("olympiad_participants")
      .select(["agent_id", "proven_agent_id"])
      .where("agent_id", "=", "famous-agent")
      .execute();
    expect(rows).toHaveLength(3);
    expect(rows.filter((r) => r.proven_agent_id === "famous-agent")).toHaveLength(1);
  });

  it("a replayed nonce is refused with agent_challenge_used", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const c = await challenge("replay-agent");
    const proof = {
      nonce: c.nonce,
      chain: "evm",
      address: wallet.address,
      signature: await wallet.signMessage({ message: c.message }),
    };
    expect((await register("replay-agent", proof)).statusCode).toBe(201);
    // the same nonce for a new (unproven) id of the same label: the nonce is spent
    const c2 = await challenge("replay-agent-2");
    const reused = await register("replay-agent-2", {
      nonce: c.nonce,
      chain: "evm",
      address: wallet.address,
      signature: await wallet.signMessage({ message: c2.message }),
    });
    expect(reused.statusCode, reused.body).toBe(409);
    expect(reused.json().code).toBe("agent_challenge_used");
  });

  it("a signature over another agent id, or by another wallet, or for another id's challenge is refused", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const forOther = await challenge("other-agent");
    // the challenge names other-agent: it cannot prove target-agent
    const mismatch = await register("target-agent", {
      nonce: forOther.nonce,
      chain: "evm",
      address: wallet.address,
      signature: await wallet.signMessage({ message: forOther.message }),
    });
    expect(mismatch.statusCode, mismatch.body).toBe(400);
    expect(mismatch.json().code).toBe("agent_challenge_mismatch");

    // a challenge for target-agent, but the signed text names another agent id
    const c = await challenge("target-agent");
    const forged = await register("target-agent", {
      nonce: c.nonce,
      chain: "evm",
      address: wallet.address,
      signature: await wallet.signMessage({
        message: c.message.replace("agent_id: target-agent", "agent_id: other-agent"),
      }),
    });
    expect(forged.statusCode, forged.body).toBe(403);
    expect(forged.json().code).toBe("agent_signature_invalid");

    // signed by a wallet other than the address claimed
    const thief = privateKeyToAccount(generatePrivateKey());
    const stolen = await register("target-agent", {
      nonce: c.nonce,
      chain: "evm",
      address: wallet.address,
      signature: await thief.signMessage({ message: c.message }),
    });
    expect(stolen.statusCode, stolen.body).toBe(403);
    // the refused attempts spent nothing: the right signature still proves it
    const ok = await register("target-agent", {
      nonce: c.nonce,
      chain: "evm",
      address: wallet.address,
      signature: await wallet.signMessage({ message: c.message }),
    });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().participant.agent_id_source).toBe("proven");
  });

  it("ed25519 by a Solana address proves an id; an expired challenge is refused", async () => {
    const wallet = solanaWallet();
    const c = await challenge("sol-agent");
    const r = await register("sol-agent", {
      nonce: c.nonce,
      chain: "solana",
      address: wallet.address,
      signature: wallet.sign(c.message),
    });
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json().participant).toMatchObject({
      agent_id_source: "proven",
      agent_address: `solana:${wallet.address}`,
    });

    // a clock past the expiry: the service's own clock is injected through the participants service
    const { participants } = t.app.services;
    const late = await challenge("late-agent");
    clock = new Date(Date.parse(late.expires_at) + 1000);
    const moved = Object.assign(Object.create(Object.getPrototypeOf(participants)), participants, { now: () => clock });
    const expired = await moved
      .register({
        who: "agent_self",
        name: "Late",
        agent_id: "late-agent",
        agent_proof: {
          nonce: late.nonce,
          chain: "solana",
          address: wallet.address,
          signature: wallet.sign(late.message),
        },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(expired).toMatchObject({ status: 410, code: "agent_challenge_expired" });
  });

  it("a human registering for themself cannot carry an agent proof", async () => {
    const r = await act({
      action: "register",
      who: "human_for_self",
      name: "Ada",
      agent_proof: {
        nonce: "n",
        chain: "evm",
        address: "0x0000000000000000000000000000000000000001",
        signature: "0x00",
      },
    });
    expect(r.statusCode).toBe(400);
  });
});

describe.each(ENGINES)("agent-id proofs under concurrency (%s)", (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(engine);
  });
  afterAll(async () => t?.close());

  it("two registrations racing with one proof: exactly one gets the proven id", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const c = (
      await t.app.inject({
        method: "POST",
        url: "/api/olympiad",
        payload: { action: "agent_challenge", agent_id: "race-agent" },
      })
    ).json();
    const proof = {
      nonce: c.nonce,
      chain: "evm",
      address: wallet.address,
      signature: await wallet.signMessage({ message: c.message }),
    };
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        t.app.inject({
          method: "POST",
          url: "/api/olympiad",
          payload: {
            action: "register",
            who: "agent_self",
            name: `Racer ${i}`,
            agent_id: "race-agent",
            agent_proof: proof,
          },
        }),
      ),
    );
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(1);
    for (const a of answers.filter((x) => x.statusCode !== 201)) {
      expect(a.statusCode, a.body).toBe(409);
      expect(a.json().code).toMatch(/^(agent_challenge_used|agent_id_taken)$/);
    }
    const proven = await t.app.services.db.kysely
      .selectFrom("olympiad_participants")
      .select("id")
      .where("proven_agent_id", "=", "race-agent")
      .execute();
    expect(proven).toHaveLength(1);
  });
});
