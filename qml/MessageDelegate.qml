// One message of the active path, as the chat view's delegate: the message's roles, an
// estimated height, and its card (MessageCard.qml) loaded into it.
import QtQuick
import Arbor

Item {
    id: root
    objectName: "messageDelegate"
    required property int sourceRow  // the row in ChatController.messages (the view shows them reversed)
    required property var messageId
    required property string messageRole
    required property string messageText
    required property string reasoningText
    required property MessageSegmentsModel segmentModel
    required property int siblingIndex
    required property int siblingCount
    required property string messageState
    required property bool streaming
    required property string statsText
    property bool editing: false
    readonly property bool isUser: messageRole === "user"
    // Until the body is made: about as tall as it will be, so the view lays out few delegates.
    // Worked out once (not a binding: a streaming text changes every frame).
    property real estimatedBodyHeight: 24
    Component.onCompleted: {
        const lines = messageText.split("\n")
        let n = 0
        for (let i = 0; i < lines.length; ++i)
            n += Math.max(1, Math.ceil(lines[i].length * 7.5 / Math.max(200, width - 104)))
        estimatedBodyHeight = n * 19 + 8
    }

    implicitHeight: (cardLoader.status === Loader.Ready ? cardLoader.implicitHeight : estimatedBodyHeight + 70) + 8
    Accessible.role: Accessible.ListItem
    Accessible.name: (isUser ? qsTr("You") : qsTr("Assistant")) + ": " + messageText

    function startEdit() {
        root.editing = true
    }

    // The card. Opening a conversation makes it asynchronously, so switching never blocks on
    // making every visible message's controls in one frame (the view lays out estimated
    // heights until each card is ready); a message added while chatting gets its card at once.
    Loader {
        id: cardLoader
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.leftMargin: root.isUser ? 64 : 16
        anchors.rightMargin: root.isUser ? 16 : 64
        asynchronous: ChatController.messages.opening
        Component.onCompleted: setSource("MessageCard.qml", { "message": root })
    }
}
