package prices

// unit is one usage quantity the price data can price: its usage key (what
// a caller reports), its price key (what the data lists), the quantity a
// price is given per, and the dimensions that place it in the hierarchy
// (cache_read_tokens is a part of input_tokens because its dimensions
// include all of input_tokens'). This is the unit registry of
// @pydantic/genai-prices 0.1.8, copied by hand: TestEveryPriceKeyKnown fails
// when a refresh of the data brings a price key missing here.
type unit struct {
	usageKey, priceKey string
	per                float64
	dims               map[string]string
}

var unitList = []unit{
	{usageKey: "audio_seconds", priceKey: "audio_hours", per: 3600, dims: map[string]string{"family": "durations", "modality": "audio"}},
	{usageKey: "cache_audio_read_tokens", priceKey: "cache_audio_read_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "audio", "token_type": "cache_read"}},
	{usageKey: "cache_audio_write_1h_tokens", priceKey: "cache_audio_write_1h_mtok", per: 1000000, dims: map[string]string{"cache_ttl": "1h", "direction": "input", "family": "tokens", "modality": "audio", "token_type": "cache_write"}},
	{usageKey: "cache_audio_write_5m_tokens", priceKey: "cache_audio_write_5m_mtok", per: 1000000, dims: map[string]string{"cache_ttl": "5m", "direction": "input", "family": "tokens", "modality": "audio", "token_type": "cache_write"}},
	{usageKey: "cache_audio_write_tokens", priceKey: "cache_audio_write_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "audio", "token_type": "cache_write"}},
	{usageKey: "cache_image_read_tokens", priceKey: "cache_image_read_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "image", "token_type": "cache_read"}},
	{usageKey: "cache_image_write_1h_tokens", priceKey: "cache_image_write_1h_mtok", per: 1000000, dims: map[string]string{"cache_ttl": "1h", "direction": "input", "family": "tokens", "modality": "image", "token_type": "cache_write"}},
	{usageKey: "cache_image_write_5m_tokens", priceKey: "cache_image_write_5m_mtok", per: 1000000, dims: map[string]string{"cache_ttl": "5m", "direction": "input", "family": "tokens", "modality": "image", "token_type": "cache_write"}},
	{usageKey: "cache_image_write_tokens", priceKey: "cache_image_write_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "image", "token_type": "cache_write"}},
	{usageKey: "cache_read_tokens", priceKey: "cache_read_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "token_type": "cache_read"}},
	{usageKey: "cache_text_read_tokens", priceKey: "cache_text_read_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "text", "token_type": "cache_read"}},
	{usageKey: "cache_text_write_1h_tokens", priceKey: "cache_text_write_1h_mtok", per: 1000000, dims: map[string]string{"cache_ttl": "1h", "direction": "input", "family": "tokens", "modality": "text", "token_type": "cache_write"}},
	{usageKey: "cache_text_write_5m_tokens", priceKey: "cache_text_write_5m_mtok", per: 1000000, dims: map[string]string{"cache_ttl": "5m", "direction": "input", "family": "tokens", "modality": "text", "token_type": "cache_write"}},
	{usageKey: "cache_text_write_tokens", priceKey: "cache_text_write_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "text", "token_type": "cache_write"}},
	{usageKey: "cache_video_read_tokens", priceKey: "cache_video_read_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "video", "token_type": "cache_read"}},
	{usageKey: "cache_video_write_1h_tokens", priceKey: "cache_video_write_1h_mtok", per: 1000000, dims: map[string]string{"cache_ttl": "1h", "direction": "input", "family": "tokens", "modality": "video", "token_type": "cache_write"}},
	{usageKey: "cache_video_write_5m_tokens", priceKey: "cache_video_write_5m_mtok", per: 1000000, dims: map[string]string{"cache_ttl": "5m", "direction": "input", "family": "tokens", "modality": "video", "token_type": "cache_write"}},
	{usageKey: "cache_video_write_tokens", priceKey: "cache_video_write_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "video", "token_type": "cache_write"}},
	{usageKey: "cache_write_1h_tokens", priceKey: "cache_write_1h_mtok", per: 1000000, dims: map[string]string{"cache_ttl": "1h", "direction": "input", "family": "tokens", "token_type": "cache_write"}},
	{usageKey: "cache_write_5m_tokens", priceKey: "cache_write_5m_mtok", per: 1000000, dims: map[string]string{"cache_ttl": "5m", "direction": "input", "family": "tokens", "token_type": "cache_write"}},
	{usageKey: "cache_write_tokens", priceKey: "cache_write_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "token_type": "cache_write"}},
	{usageKey: "code_executions", priceKey: "code_executions_kcount", per: 1000, dims: map[string]string{"family": "tool_calls", "tool_type": "code_execution"}},
	{usageKey: "input_annotated_document_pages", priceKey: "input_annotated_document_kpages", per: 1000, dims: map[string]string{"direction": "input", "family": "document_pages", "page_type": "annotated"}},
	{usageKey: "input_audio_seconds", priceKey: "input_audio_hours", per: 3600, dims: map[string]string{"direction": "input", "family": "durations", "modality": "audio"}},
	{usageKey: "input_audio_tokens", priceKey: "input_audio_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "audio"}},
	{usageKey: "input_audio_tool_tokens", priceKey: "input_audio_tool_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "audio", "token_type": "tool"}},
	{usageKey: "input_characters", priceKey: "input_mchars", per: 1000000, dims: map[string]string{"direction": "input", "family": "characters"}},
	{usageKey: "input_document_pages", priceKey: "input_document_kpages", per: 1000, dims: map[string]string{"direction": "input", "family": "document_pages"}},
	{usageKey: "input_image_tokens", priceKey: "input_image_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "image"}},
	{usageKey: "input_image_tool_tokens", priceKey: "input_image_tool_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "image", "token_type": "tool"}},
	{usageKey: "input_pixels", priceKey: "input_gpixels", per: 1000000000, dims: map[string]string{"direction": "input", "family": "pixels"}},
	{usageKey: "input_text_messages", priceKey: "input_text_messages_kcount", per: 1000, dims: map[string]string{"direction": "input", "family": "messages", "modality": "text"}},
	{usageKey: "input_text_tokens", priceKey: "input_text_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "text"}},
	{usageKey: "input_text_tool_tokens", priceKey: "input_text_tool_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "text", "token_type": "tool"}},
	{usageKey: "input_tokens", priceKey: "input_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens"}},
	{usageKey: "input_tool_tokens", priceKey: "input_tool_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "token_type": "tool"}},
	{usageKey: "input_video_tokens", priceKey: "input_video_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "video"}},
	{usageKey: "input_video_tool_tokens", priceKey: "input_video_tool_mtok", per: 1000000, dims: map[string]string{"direction": "input", "family": "tokens", "modality": "video", "token_type": "tool"}},
	{usageKey: "output_audio_citation_tokens", priceKey: "output_audio_citation_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "modality": "audio", "token_type": "citation"}},
	{usageKey: "output_audio_reasoning_tokens", priceKey: "output_audio_reasoning_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "modality": "audio", "token_type": "reasoning"}},
	{usageKey: "output_audio_seconds", priceKey: "output_audio_hours", per: 3600, dims: map[string]string{"direction": "output", "family": "durations", "modality": "audio"}},
	{usageKey: "output_audio_tokens", priceKey: "output_audio_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "modality": "audio"}},
	{usageKey: "output_citation_tokens", priceKey: "output_citation_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "token_type": "citation"}},
	{usageKey: "output_image_citation_tokens", priceKey: "output_image_citation_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "modality": "image", "token_type": "citation"}},
	{usageKey: "output_image_reasoning_tokens", priceKey: "output_image_reasoning_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "modality": "image", "token_type": "reasoning"}},
	{usageKey: "output_image_tokens", priceKey: "output_image_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "modality": "image"}},
	{usageKey: "output_reasoning_tokens", priceKey: "output_reasoning_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "token_type": "reasoning"}},
	{usageKey: "output_text_citation_tokens", priceKey: "output_text_citation_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "modality": "text", "token_type": "citation"}},
	{usageKey: "output_text_reasoning_tokens", priceKey: "output_text_reasoning_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "modality": "text", "token_type": "reasoning"}},
	{usageKey: "output_text_tokens", priceKey: "output_text_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "modality": "text"}},
	{usageKey: "output_tokens", priceKey: "output_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens"}},
	{usageKey: "output_video_citation_tokens", priceKey: "output_video_citation_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "modality": "video", "token_type": "citation"}},
	{usageKey: "output_video_reasoning_tokens", priceKey: "output_video_reasoning_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "modality": "video", "token_type": "reasoning"}},
	{usageKey: "output_video_tokens", priceKey: "output_video_mtok", per: 1000000, dims: map[string]string{"direction": "output", "family": "tokens", "modality": "video"}},
	{usageKey: "requests", priceKey: "requests_kcount", per: 1000, dims: map[string]string{"family": "requests"}},
	{usageKey: "rerank_searches", priceKey: "rerank_searches_kcount", per: 1000, dims: map[string]string{"family": "rerank"}},
	{usageKey: "social_searches", priceKey: "social_searches_kcount", per: 1000, dims: map[string]string{"family": "tool_calls", "tool_type": "social_search"}},
	{usageKey: "storage_searches", priceKey: "storage_searches_kcount", per: 1000, dims: map[string]string{"family": "tool_calls", "tool_type": "storage_search"}},
	{usageKey: "web_searches", priceKey: "web_searches_kcount", per: 1000, dims: map[string]string{"family": "tool_calls", "tool_type": "web_search"}},
}
