import { Box, type DOMElement, measureElement, Text } from 'ink';
import { useEffect, useRef, useState } from 'react';
import { type DeliveryDetail, deliveryDetail } from '../commands/deliveries.js';
import { pad } from '../render.js';
import { useKeys } from './keys.js';

export interface DeliveryViewProps {
  /** The delivery as `GET /sandbox/v1/deliveries/{id}` gives it; null while it loads. */
  detail: DeliveryDetail | null;
  width: number;
  rows: number;
  onClose(): void;
  onRedeliver(): void;
}

/**
 * One delivery in full, as `va-sandbox deliveries show` prints it: the request as sent (headers and body) and
 * every attempt with its response. Long ones scroll: the arrows, page up and down, home and end.
 */
export function DeliveryView({ detail, width, rows, onClose, onRedeliver }: DeliveryViewProps) {
  const [scroll, setScroll] = useState(0);
  const [height, setHeight] = useState(0);
  const content = useRef<DOMElement>(null);
  const visible = rows - 1;
  const last = Math.max(height - visible, 0);
  useEffect(() => {
    if (content.current) setHeight(measureElement(content.current).height);
  });
  useKeys((input, key) => {
    const to = (line: number) => setScroll(Math.min(Math.max(line, 0), last));
    if (key.escape || key.leftArrow) onClose();
    else if (input === 'r') onRedeliver();
    else if (key.upArrow || input === 'k') to(scroll - 1);
    else if (key.downArrow || input === 'j') to(scroll + 1);
    else if (key.pageUp) to(scroll - visible);
    else if (key.pageDown || input === ' ') to(scroll + visible);
    else if (key.home || input === 'g') to(0);
    else if (key.end || input === 'G') to(last);
  });
  const where = height > visible ? `lines ${scroll + 1}-${Math.min(scroll + visible, height)} of ${height}` : '';
  return (
    <Box flexDirection="column" width={width} height={rows} flexShrink={0}>
      <Text bold inverse wrap="truncate-end">
        {pad(` delivery ${detail?.id ?? ''}  ${where}`, width)}
      </Text>
      <Box flexDirection="column" height={visible} overflow="hidden">
        <Box ref={content} flexDirection="column" marginTop={-Math.min(scroll, last)} flexShrink={0}>
          <Text>{detail ? deliveryDetail(detail) : 'loading…'}</Text>
        </Box>
      </Box>
    </Box>
  );
}
