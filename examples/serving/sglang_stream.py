from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.plugins import load_plugins
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from chatcodec import ChatCodec, profiles

demo = profiles.load("qwen3_coder").demo  # a real Qwen3-Coder output from the peer corpus
codec = ChatCodec.from_pretrained("qwen3_coder")

# The same stand-in tokenizer as in the vLLM example: Qwen's special tokens, the real chat template.
bpe = Tokenizer(models.BPE())
bpe.pre_tokenizer, bpe.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
specials = ["<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>"]
bpe.train_from_iterator([demo.output], trainers.BpeTrainer(
    vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, chat_template=codec.chat_template,
                                    eos_token="<|im_end|>")

load_plugins()  # what `sglang.launch_server` does first: chatcodec's entry point registers its parsers
prompt = codec.apply_chat_template(demo.messages, tools=demo.tools, add_generation_prompt=True, tokenize=False)
# one pair per request, as SGLang's chat server builds them; it tells the reasoning parser only
# whether the prompt opened reasoning
reasoning_parser = ReasoningParser("chatcodec", stream_reasoning=True, tokenizer=tokenizer,
                                   force_reasoning=prompt.endswith("<think>\n"))
tool_parser = FunctionCallParser([Tool(**tool) for tool in demo.tools], "chatcodec", tokenizer=tokenizer)
ids = tokenizer.encode(demo.output, add_special_tokens=False)
for start in range(0, len(ids), 4):  # four tokens per engine step
    text = tokenizer.decode(ids[start : start + 4], skip_special_tokens=False)
    last = start + 4 >= len(ids)
    reasoning, normal = reasoning_parser.parse_stream_chunk(text)
    if last:  # the end of generation: what the reasoning parser still holds
        end_reasoning, end_normal = reasoning_parser.parse_stream_end()
        reasoning, normal = (reasoning or "") + (end_reasoning or ""), (normal or "") + (end_normal or "")
    normal, calls = tool_parser.parse_stream_chunk(normal or "")
    if last:  # ... and the tool-call parser
        end_normal, end_calls = tool_parser.parse_stream_end()
        normal, calls = normal + end_normal, calls + end_calls
    for item in [reasoning and {"reasoning_content": reasoning}, normal and {"content": normal},
                 *(call.model_dump(exclude_none=True) for call in calls)]:
        if item:
            print(item)
