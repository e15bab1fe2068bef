from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.parser.parser_manager import ParserManager
from vllm.plugins import load_general_plugins

from chatcodec import ChatCodec, profiles

demo = profiles.load("qwen3_coder").demo  # a real Qwen3-Coder output from the peer corpus
codec = ChatCodec.from_pretrained("qwen3_coder")

# A stand-in for the model's tokenizer (nothing is downloaded): a small BPE with Qwen's special
# tokens and the real Qwen3-Coder chat template, from which the plugin detects its profile.
bpe = Tokenizer(models.BPE())
bpe.pre_tokenizer, bpe.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
specials = ["<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>"]
bpe.train_from_iterator([demo.output], trainers.BpeTrainer(
    vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, chat_template=codec.chat_template,
                                    eos_token="<|im_end|>")

load_general_plugins()  # what `vllm serve` does first: chatcodec's entry point registers its parsers
parser_cls = ParserManager.get_parser(tool_parser_name="chatcodec", reasoning_parser_name="chatcodec",
                                      enable_auto_tools=True, model_name="qwen3-coder", tokenizer=tokenizer)
request = ChatCompletionRequest(model="qwen3-coder", messages=demo.messages, tools=demo.tools)
prompt = codec.apply_chat_template(demo.messages, tools=demo.tools, add_generation_prompt=True, tokenize=False)
prompt_ids = tokenizer.encode(prompt, add_special_tokens=False)
# one per request, as vLLM's chat server runs it: the chatcodec parsers, tool_choice, finish_reason
processor = ChatStreamProcessor(request, parser_cls(tokenizer, request.tools), enable_auto_tools=True,
                                parser_cls=parser_cls)
ids = tokenizer.encode(demo.output, add_special_tokens=False)
for start in range(0, len(ids), 4):  # four tokens per engine step
    step_ids = ids[start : start + 4]
    last = start + 4 >= len(ids)
    step = processor.step(tokenizer.decode(step_ids, skip_special_tokens=False), step_ids,
                          "stop" if last else None, prompt_ids if start == 0 else None)
    if step.delta is not None:
        delta = step.delta.model_dump(exclude_none=True)
        for call in delta.get("tool_calls", []):
            call.pop("id", None)  # a random id in the family's form, here "call_" and 24 characters
        print(delta, step.finish_reason or "")
