"""The Python client (clients/python, package slotserve) against a real slotserve-server:
sync and asyncio streaming generate, complete, info, health, typed errors, cancellation and
beam search.

    SLOTSERVE_SERVER=build/server/slotserve-server SLOTSERVE_MODEL=build/test-models/tiny-abc \
    PYTHONPATH=build/clients/python python3 -m unittest -v test_python_client
"""

import asyncio
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import slotserve


class Server:
    """slotserve-server on loopback with free ports; stopped with SIGTERM."""

    def __init__(self, *flags):
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(
            [os.environ["SLOTSERVE_SERVER"], f"--model={os.environ['SLOTSERVE_MODEL']}",
             "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0", "--threads=1",
             "--max-new-tokens-limit=200000", *flags],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            match = re.search(r"listening on ([0-9.]+:[0-9]+)", self.output())
            if match:
                self.address = match.group(1)
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"slotserve-server did not start:\n{self.output()}")

    def output(self):
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def pool_is_full(client):
    info = client.info()
    return (info.slots_free == info.slots_total and info.requests_running == 0
            and info.requests_queued == 0)


class SyncClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--max-slots=2", "--max-queued=1")
        cls.client = slotserve.Client(cls.server.address, timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        assert cls.server.stop() == 0, cls.server.output()

    def test_generate_streams_chunks_then_finished_and_equals_complete(self):
        with self.client.generate("In the beginning", max_new_tokens=24, temperature=0,
                                  ignore_eos=True) as stream:
            chunks = list(stream)
        # Tokens made while a message is on its way merge into the next one, and the tiny model
        # makes 24 in about a millisecond: one chunk is as right as many. That chunks arrive
        # before a generation ends is checked by the cancelling test (200,000 tokens).
        self.assertGreaterEqual(len(chunks), 1)
        self.assertIsInstance(chunks[0], slotserve.Chunk)
        self.assertEqual(stream.finished.finish_reason, "length")
        self.assertEqual(stream.finished.generated_tokens, 24)
        self.assertGreater(stream.finished.timings.total, 0)
        ids = [i for chunk in chunks for i in chunk.token_ids]
        whole = self.client.complete("In the beginning", max_new_tokens=24, temperature=0,
                                     ignore_eos=True)
        self.assertEqual(whole.token_ids, ids)
        self.assertEqual(whole.text, "".join(chunk.text for chunk in chunks))
        self.assertEqual(whole.finished.prompt_tokens, stream.finished.prompt_tokens)

    def test_seed_stop_token_prompt_and_logprobs(self):
        first = self.client.complete([1, 17, 42], max_new_tokens=12, seed=5, top_k=40)
        second = self.client.complete([1, 17, 42], max_new_tokens=12, seed=5, top_k=40)
        self.assertEqual(first.token_ids, second.token_ids)
        self.assertEqual(first.finished.seed, 5)
        self.assertEqual(first.finished.prompt_tokens, 3)
        stream = self.client.generate("And God said", max_new_tokens=5, temperature=0,
                                      logprobs=2, ignore_eos=True)
        logprobs = [entry for chunk in stream for entry in chunk.logprobs]
        self.assertEqual(len(logprobs), 5)
        self.assertEqual(logprobs[0].top[0][0], logprobs[0].id)  # greedy: the likeliest
        self.assertEqual(len(logprobs[0].top), 2)

    def test_prompt_logprobs_score_the_prompt_as_generation_scores_its_tokens(self):
        # The greedy token after [1, 17, 42], and its log probability as generated ...
        generated = self.client.complete([1, 17, 42], max_new_tokens=1, temperature=0,
                                         logprobs=0, ignore_eos=True)
        token = generated.token_ids[0]
        # ... is the score of the last prompt token of [1, 17, 42, token].
        scored = self.client.complete([1, 17, 42, token], max_new_tokens=1, temperature=0,
                                      logprobs=1, prompt_logprobs=True, ignore_eos=True)
        self.assertEqual([entry.id for entry in scored.prompt_logprobs], [17, 42, token])
        self.assertAlmostEqual(scored.prompt_logprobs[-1].logprob, generated.logprobs[0].logprob,
                               places=4)
        self.assertEqual(len(scored.prompt_logprobs[0].top), 1)
        stream = self.client.generate([1, 17, 42, token], max_new_tokens=2, temperature=0,
                                      logprobs=0, prompt_logprobs=True, ignore_eos=True)
        chunks = list(stream)
        self.assertEqual([e.id for e in chunks[0].prompt_logprobs], [17, 42, token])
        self.assertFalse(any(chunk.prompt_logprobs for chunk in chunks[1:]))
        with self.assertRaises(slotserve.InvalidArgumentError) as refused:
            self.client.complete("And", max_new_tokens=1, prompt_logprobs=True)
        self.assertIn("logprobs.prompt", str(refused.exception))

    def test_logit_bias_bans_the_greedy_token_and_forces_another(self):
        # Over gRPC (SamplingParams.logit_bias): -100 on the greedy token gives the runner-up,
        # which the unbiased request reported as its likeliest alternative, with its raw logprob.
        plain = self.client.complete([1, 17, 42], max_new_tokens=1, temperature=0, logprobs=3,
                                     ignore_eos=True)
        greedy = plain.token_ids[0]
        runner_up, runner_up_logprob = max(
            ((token_id, logprob) for token_id, logprob in plain.logprobs[0].top
             if token_id != greedy), key=lambda entry: entry[1])
        banned = self.client.complete([1, 17, 42], max_new_tokens=1, temperature=0, logprobs=0,
                                      ignore_eos=True, logit_bias={greedy: -100})
        self.assertEqual(banned.token_ids, [runner_up])
        self.assertAlmostEqual(banned.logprobs[0].logprob, runner_up_logprob, places=4)
        forced = self.client.complete("And God said", max_new_tokens=4, temperature=1.0,
                                      seed=3, ignore_eos=True, logit_bias={"42": 100.0})
        self.assertEqual(forced.token_ids, [42] * 4)
        with self.assertRaises(slotserve.InvalidArgumentError) as refused:
            self.client.complete("And", max_new_tokens=1, logit_bias={5: 250})
        self.assertIn("sampling.logit_bias biases must be in [-100, 100]", str(refused.exception))

    def test_n_choices_carry_their_index_and_each_equals_its_seed_alone(self):
        options = dict(max_new_tokens=10, temperature=1.0, seed=21, ignore_eos=True)
        texts = {0: "", 1: ""}
        with self.client.generate("In the beginning", n=2, **options) as stream:
            for chunk in stream:
                texts[chunk.choice_index] += chunk.text
        self.assertEqual(sorted(f.choice_index for f in stream.finished_choices), [0, 1])
        for index in (0, 1):
            alone = self.client.complete("In the beginning",
                                         **dict(options, seed=21 + index))
            self.assertEqual(texts[index], alone.text, f"choice {index}")
        self.assertTrue(wait_for(lambda: pool_is_full(self.client), 10))

    def test_sessions_continue_and_travel_as_bytes(self):
        greedy = dict(temperature=0, ignore_eos=True)
        first = self.client.complete("In the beginning", max_new_tokens=6, keep_session=True,
                                     **greedy)
        handle = first.finished.session_handle
        self.assertTrue(handle)
        state = self.client.export_session(handle)
        self.assertIsInstance(state, bytes)
        self.assertGreater(len(state), 1000)
        imported = self.client.import_session(state)
        self.assertNotEqual(imported, handle)
        # Continuing the kept session and its imported copy give the same tokens.
        here = self.client.complete(" and", max_new_tokens=8, session=handle, **greedy)
        there = self.client.complete(" and", max_new_tokens=8, session=imported, **greedy)
        self.assertEqual(here.token_ids, there.token_ids)
        with self.assertRaises(slotserve.NotFoundError):
            self.client.export_session("no-such-session")
        with self.assertRaises(slotserve.InvalidArgumentError):
            self.client.import_session(b"not a state")

    def test_info_and_health(self):
        info = self.client.info()
        self.assertEqual(info.model, "tiny-abc")
        self.assertEqual(info.slots_total, 2)
        self.assertEqual(self.client.health(), "SERVING")

    def test_invalid_argument_is_a_typed_error_naming_the_field(self):
        with self.assertRaises(slotserve.InvalidArgumentError) as caught:
            self.client.complete("x", temperature=-1)
        self.assertIn("sampling.temperature", caught.exception.details)
        self.assertIsInstance(caught.exception, slotserve.SlotServeError)
        with self.assertRaises(slotserve.InvalidArgumentError):
            list(self.client.generate("x", top_p=1.5))
        with self.assertRaises(TypeError):
            self.client.complete(3.5)

    def test_source_reaches_the_server_which_a_decoder_only_model_refuses(self):
        info = self.client.info()
        self.assertFalse(info.is_seq2seq)
        self.assertEqual(info.cross_memory_bytes_per_request, 0)
        # Ids travel as given; the message counts them.
        with self.assertRaises(slotserve.InvalidArgumentError) as caught:
            self.client.complete("In the beginning", source=[5, 6, 7], max_new_tokens=4)
        self.assertIn("decoder-only, got a source of 3 tokens", caught.exception.details)
        # No prompt beside a source is allowed by the client (the target prefix is optional).
        with self.assertRaises(slotserve.InvalidArgumentError) as caught:
            list(self.client.generate(None, source="Hello", max_new_tokens=4))
        self.assertIn("decoder-only", caught.exception.details)
        with self.assertRaises(TypeError):
            self.client.complete("x", source=3.5)
        self.assertTrue(wait_for(lambda: pool_is_full(self.client), 10))

    def test_cancelling_a_stream_frees_its_slot_and_a_full_queue_is_resource_exhausted(self):
        long = dict(max_new_tokens=200000, temperature=0, ignore_eos=True)
        # One connection each, as separate clients, so a stream nobody reads stalls only its
        # own; each started once the one before holds its slot (a request that arrives while
        # another still waits for the next engine step to be admitted counts as queued).
        clients = [slotserve.Client(self.server.address,
                                    options=[("grpc.use_local_subchannel_pool", 1)])
                   for _ in range(3)]
        streams = []
        for client, prompt in zip(clients[:2], ["In", "And God said"]):
            streams.append(client.generate(prompt, **long))
            self.assertIsInstance(next(iter(streams[-1])), slotserve.Chunk)
        streams.append(clients[2].generate("Let there be", **long))
        # Two slots run, the third request waits in the queue (--max-queued=1): full.
        self.assertTrue(wait_for(lambda: self.client.info().requests_queued == 1, 20),
                        self.client.info())
        with self.assertRaises(slotserve.ResourceExhaustedError):
            self.client.complete("x")
        for stream in streams:
            stream.cancel()
        self.assertEqual(list(streams[0]), [])  # cancelled: the iteration just ends
        self.assertIsNone(streams[0].finished)
        self.assertTrue(wait_for(lambda: pool_is_full(self.client), 10))
        for client in clients:
            client.close()


class BeamSearchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--max-slots=4")
        cls.client = slotserve.Client(cls.server.address, timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        assert cls.server.stop() == 0, cls.server.output()

    def test_the_best_streams_once_and_finished_holds_the_n_best(self):
        options = dict(beam_width=3, n_best=2, length_penalty=0.5, max_new_tokens=8,
                       ignore_eos=True)
        with self.client.generate("In the beginning", **options) as stream:
            chunks = list(stream)
        self.assertEqual(len(chunks), 1, "beam tokens arrive once, when the search ends")
        hypotheses = stream.finished.hypotheses
        self.assertEqual(len(hypotheses), 2)
        self.assertIsInstance(hypotheses[0], slotserve.Hypothesis)
        self.assertEqual(chunks[0].token_ids, hypotheses[0].token_ids)
        self.assertEqual(chunks[0].text, hypotheses[0].text)
        self.assertGreaterEqual(hypotheses[0].score, hypotheses[1].score)
        self.assertNotEqual(hypotheses[0].token_ids, hypotheses[1].token_ids)
        for hypothesis in hypotheses:
            self.assertEqual(len(hypothesis.token_ids), 8)
            self.assertEqual(hypothesis.finish_reason, "length")
            self.assertAlmostEqual(hypothesis.score, hypothesis.logprob_sum / 8 ** 0.5, places=9)
        whole = self.client.complete("In the beginning", **options)
        self.assertEqual(whole.text, hypotheses[0].text)
        self.assertEqual(whole.finished.hypotheses, hypotheses)
        self.assertTrue(wait_for(lambda: pool_is_full(self.client), 10))

    def test_refusals_name_the_option_and_info_reports_the_widest_beam(self):
        self.assertEqual(self.client.info().max_beam_width, 4)
        with self.assertRaises(slotserve.InvalidArgumentError) as refused:
            self.client.complete("In the beginning", beam_width=3, temperature=0.9)
        self.assertIn("sampling.temperature must be 0 or unset", str(refused.exception))
        with self.assertRaises(slotserve.InvalidArgumentError) as refused:
            self.client.complete("In the beginning", beam_width=5)
        self.assertIn("beam.width must be in [1, 4]", str(refused.exception))
        with self.assertRaises(slotserve.InvalidArgumentError) as refused:
            self.client.complete("In the beginning", beam_width=2, n_best=3)
        self.assertIn("beam.n_best must be in [1, beam.width = 2], got 3", str(refused.exception))

    def test_async_client_returns_the_hypotheses_too(self):
        async def run():
            async with slotserve.AsyncClient(self.server.address, timeout=60) as client:
                return await client.complete("And God said", beam_width=2, n_best=2,
                                             max_new_tokens=5, ignore_eos=True)

        whole = asyncio.run(run())
        self.assertEqual(len(whole.finished.hypotheses), 2)
        self.assertEqual(whole.text, whole.finished.hypotheses[0].text)


class LargeStateTest(unittest.TestCase):
    """A softmax model's state (its KV cache, 4 MiB for the committed c512 model) is past gRPC's
    default 4 MiB message limit: export and import must still carry it."""

    def test_a_state_past_four_mib_travels_both_ways(self):
        model = os.path.join(os.path.dirname(__file__), "../../../models/trained/kjv-softmax-c512")
        server = Server(f"--model={model}", "--max-slots=2")
        try:
            with slotserve.Client(server.address, timeout=60) as client:
                greedy = dict(temperature=0, ignore_eos=True)
                first = client.complete("In the beginning", keep_session=True, max_new_tokens=4,
                                        **greedy)
                state = client.export_session(first.finished.session_handle)
                self.assertGreater(len(state), 4 << 20)
                copy = client.import_session(state)
                here = client.complete(" and", session=first.finished.session_handle,
                                       max_new_tokens=6, **greedy)
                there = client.complete(" and", session=copy, max_new_tokens=6, **greedy)
                self.assertEqual(here.token_ids, there.token_ids)
        finally:
            self.assertEqual(server.stop(), 0, server.output())


class UnreachableServerTest(unittest.TestCase):
    def test_a_closed_port_is_unavailable(self):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        with slotserve.Client(f"127.0.0.1:{port}", timeout=5) as client:
            with self.assertRaises(slotserve.UnavailableError):
                client.info()


class AsyncClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--max-slots=2")

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0, cls.server.output()

    def test_async_generate_complete_info_health_and_errors(self):
        async def run():
            async with slotserve.AsyncClient(self.server.address, timeout=60) as client:
                stream = client.generate("In the beginning", max_new_tokens=16, temperature=0,
                                         ignore_eos=True)
                chunks = [chunk async for chunk in stream]
                whole = await client.complete("In the beginning", max_new_tokens=16,
                                              temperature=0, ignore_eos=True)
                self.assertEqual(whole.text, "".join(chunk.text for chunk in chunks))
                self.assertEqual(stream.finished.generated_tokens, 16)
                self.assertEqual((await client.info()).model, "tiny-abc")
                self.assertEqual(await client.health(), "SERVING")
                with self.assertRaises(slotserve.InvalidArgumentError):
                    await client.complete("x", min_p=2)
                # Cancelling mid-stream ends the iteration quietly and frees the slot.
                async with client.generate("And God said", max_new_tokens=200000,
                                           ignore_eos=True) as endless:
                    async for _ in endless:
                        break
                for _ in range(500):
                    info = await client.info()
                    if info.slots_free == info.slots_total:
                        break
                    await asyncio.sleep(0.01)
                self.assertEqual(info.slots_free, info.slots_total)

        asyncio.run(run())


def make_certificates(directory):
    """A CA, a server certificate for 127.0.0.1/localhost and a client certificate, both
    signed by it, made by openssl into `directory`; returns their paths by name."""
    paths = {name: os.path.join(directory, name) for name in
             ("ca.pem", "ca.key", "server.pem", "server.key", "client.pem", "client.key")}
    san = os.path.join(directory, "san.ext")
    with open(san, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")

    def openssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=ca",
            "-keyout", paths["ca.key"], "-out", paths["ca.pem"])
    for name, extra in (("server", ["-extfile", san]), ("client", [])):
        csr = os.path.join(directory, f"{name}.csr")
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout",
                paths[f"{name}.key"], "-out", csr)
        openssl("x509", "-req", "-in", csr, "-CA", paths["ca.pem"], "-CAkey", paths["ca.key"],
                "-CAcreateserial", "-days", "2", "-out", paths[f"{name}.pem"], *extra)
    return paths


class TlsAndApiKeyTest(unittest.TestCase):
    """Mutual TLS and an API key: the client's root_certificates, certificate_chain,
    private_key and api_key arguments."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.paths = make_certificates(cls.dir.name)
        keys = os.path.join(cls.dir.name, "keys.txt")
        with open(keys, "w") as f:
            f.write("py-key\n")
        cls.server = Server(f"--tls-cert={cls.paths['server.pem']}",
                            f"--tls-key={cls.paths['server.key']}",
                            f"--tls-client-ca={cls.paths['ca.pem']}", f"--api-keys-file={keys}")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.dir.cleanup()

    def read(self, name):
        with open(self.paths[name], "rb") as f:
            return f.read()

    def client(self, **kwargs):
        return slotserve.Client(self.server.address, timeout=10,
                                root_certificates=self.read("ca.pem"), **kwargs)

    def test_certificate_and_key_work_and_each_is_needed(self):
        tls = {"certificate_chain": self.read("client.pem"),
               "private_key": self.read("client.key")}
        with self.client(api_key="py-key", **tls) as client:
            self.assertEqual(client.complete("In", max_new_tokens=2, ignore_eos=True)
                             .finished.generated_tokens, 2)
            self.assertEqual(client.health(), "SERVING")
        with self.client(**tls) as client:
            self.assertEqual(client.health(), "SERVING")  # health needs no key
            with self.assertRaises(slotserve.errors.UnauthenticatedError):
                client.info()
        with self.client(api_key="wrong", **tls) as client:
            with self.assertRaises(slotserve.errors.UnauthenticatedError):
                client.info()
        with self.client(api_key="py-key") as client:  # no client certificate
            with self.assertRaises(slotserve.errors.UnavailableError):
                client.info()

    def test_async_client_takes_the_same_arguments(self):
        async def run():
            async with slotserve.AsyncClient(
                    self.server.address, timeout=10, root_certificates=self.read("ca.pem"),
                    certificate_chain=self.read("client.pem"),
                    private_key=self.read("client.key"), api_key="py-key") as client:
                info = await client.info()
                self.assertGreater(info.slots_total, 0)

        asyncio.run(run())

    def test_tls_arguments_without_root_certificates_are_refused(self):
        with self.assertRaises(ValueError):
            slotserve.Client("127.0.0.1:1", private_key=b"x", certificate_chain=b"y")


if __name__ == "__main__":
    unittest.main()
